package io.mstar.worker.kernel.tts;

import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * Where the toy-tts transformer runs: plain Java ({@link HostLmBackend}), CUDA ({@code CudaLmBackend}), or one rank of
 * a tensor-parallel group on the host ({@link TensorParallelLmBackend}). All compute the same function of the weights
 * ({@link ToyTtsWeights}) and the KV pool; the GPU's float arithmetic differs from the reference's in rounding only
 * (docs/toy-tts.md states the tolerance), a group's is the reference's bit for bit ({@link LmForward}).
 */
public interface LmBackend {

    /**
     * Runs every job of a batch: writes each fed token's K and V into its slot of {@code pool} and, for jobs that
     * want them, answers the {@link ToyTtsWeights#VOCAB} logits after the job's last token (null for the others).
     * Before this returns, the pool holds the new K and V.
     */
    float[][] run(Device device, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs);
}
