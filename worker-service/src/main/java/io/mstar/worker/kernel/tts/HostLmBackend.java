package io.mstar.worker.kernel.tts;

import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * The toy-tts transformer in plain Java: the reference the CUDA kernels and the tensor-parallel ranks
 * ({@link TensorParallelLmBackend}) are compared with. Per job it copies the request's earlier K/V out of the pool
 * page by page (one contiguous copy per page), runs the fed tokens (each attends to everything before it and to
 * itself), and writes each new token's K/V back into its slot. Works on any {@link Device} through its copies. The
 * math is {@link LmForward}'s on the whole model. Single-threaded scratch: owned by the engine loop.
 *
 * <p>Per token at position {@code p}, per layer: {@code h = rmsnorm(x) * g}; {@code q,k,v = h Wq, h Wk, h Wv};
 * RoPE on q and k (pairs {@code (2i, 2i+1)} of each head, angle {@code p * theta^(-2i/head_dim)}); causal softmax
 * attention per head over the cache; {@code x += o Wo}; {@code x += silu(rmsnorm(x) W1) W2}. Logits:
 * {@code LOGIT_SCALE * (rmsnorm(x) Head)[v] + prior[v]}.
 */
public final class HostLmBackend implements LmBackend {

    private final LmForward forward;

    public HostLmBackend(ToyTtsWeights weights) {
        this.forward = new LmForward(LmShard.whole(weights));
    }

    @Override
    public float[][] run(Device device, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs) {
        return forward.run(device, pool, layout, jobs, LmForward.BlockGather.WHOLE);
    }
}
