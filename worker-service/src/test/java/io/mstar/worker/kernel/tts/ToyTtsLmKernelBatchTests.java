package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.HostDevice;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.TokenSampler;

/**
 * The lm reads a batch's states and writes its outputs in one transfer each: a call whose state is bad still fails
 * alone, the others' tokens are what they are without it, and every buffer it made is the caller's to free.
 */
class ToyTtsLmKernelBatchTests {

    private static final SamplingConfig SAMPLING = new SamplingConfig(null, 0.8, 40, 1.0, true, 1.0, 0L);

    @Test
    void aBadStateFailsItsCallAloneAndTheOthersDecodeAsWithoutIt() throws Exception {
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (HostDevice device = new HostDevice(HostDevice.NAME, 64 << 20)) {
            long baseline = device.stats().liveBuffers();
            ToyTtsLmKernel kernel = new ToyTtsLmKernel(() -> new HostLmBackend(weights));
            try (KvCache cache = new KvCache(device, new KvCacheConfig(16, 64), ToyTtsWeights.BYTES_PER_TOKEN)) {
                List<String> ids = List.of("a", "bad", "c");
                ids.forEach(cache::addRequest);
                Tensor[] states = {
                        Int32Tensors.write(device, new int[] {'h', 0}),
                        new Tensor(DeviceUploads.floats(device, new float[] {1f, 0f}), "float32", List.of(2L)),
                        Int32Tensors.write(device, new int[] {'q', 0})};
                List<NodeCall> calls = new ArrayList<>();
                List<KvStep> steps = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    calls.add(call(ids.get(i), states[i]));
                    steps.add(reserve(cache, ids.get(i), 100 + i));
                }

                List<NodeResult> batch = kernel.forward(device, calls, steps);

                assertThat(batch.get(1).failed()).isTrue();
                assertThat(batch.get(1).errorType()).isEqualTo(WorkerErrorType.INVALID_INPUT);
                assertThat(batch.get(1).outputs()).isEmpty();
                for (int i : new int[] {0, 2}) {
                    cache.truncate(ids.get(i), 0);
                    NodeResult alone = kernel.forward(device, List.of(calls.get(i)),
                            List.of(reserve(cache, ids.get(i), 100 + i))).get(0);
                    assertThat(batch.get(i).failed()).isFalse();
                    assertThat(batch.get(i).outputs().keySet()).isEqualTo(alone.outputs().keySet());
                    batch.get(i).outputs().forEach((name, t) -> assertThat(Int32Tensors.read(device, t))
                            .as("%s of call %d", name, i).isEqualTo(Int32Tensors.read(device, alone.outputs().get(name))));
                    alone.outputs().values().forEach(t -> device.free(t.buffer()));
                }
                batch.forEach(r -> r.outputs().values().forEach(t -> device.free(t.buffer())));
                for (Tensor t : states) {
                    device.free(t.buffer());
                }
                ids.forEach(cache::releaseRequest);
            } finally {
                kernel.close();
            }
            assertThat(device.stats().liveBuffers()).as("every tensor freed").isEqualTo(baseline);
        }
    }

    private static KvStep reserve(KvCache cache, String id, long seed) {
        int first = cache.appendTokens(id, 1);
        return new KvStep(id, cache.pool(), cache.layout(), cache.pages(id), first, 1, SAMPLING, seed,
                new TokenSampler(), cache.residentLease(id));
    }

    private static NodeCall call(String id, Tensor state) {
        return new NodeCall(id, Map.of(ToyTtsModel.STATE, state), new CurrentForwardPassInfo(id, ToyTtsModel.DECODE,
                false, 0, 0L, 1 << 20), new NestedLoopIndices(List.of(), Map.of(), 0));
    }
}
