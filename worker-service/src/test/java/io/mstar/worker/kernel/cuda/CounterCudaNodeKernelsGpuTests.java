package io.mstar.worker.kernel.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kernel.counter.CounterHostKernels;

/**
 * Each counter node on the GPU against {@link CounterHostKernels} on host memory, batch for batch: the same output
 * names, shapes, values and finish flags, the same per-request failures, and every buffer freed.
 */
@Tag("gpu")
class CounterCudaNodeKernelsGpuTests {

    private static final long SEED = Seeds.of("CounterCudaNodeKernelsGpuTests");

    private CudaDevice gpu;
    private HostDevice host;
    private ModelKernels onGpu;
    private final ModelKernels onHost = CounterHostKernels.kernels();

    @BeforeEach
    void open() {
        gpu = new CudaDevice(0);
        host = new HostDevice(HostDevice.NAME, 1 << 24);
        onGpu = CounterCudaNodeKernels.kernels(new CounterCudaKernels(gpu));
    }

    @AfterEach
    void everythingFreed() {
        try {
            assertThat(gpu.stats().bytesInUse()).as("gpu bytes").isZero();
            assertThat(host.stats().bytesInUse()).as("host bytes").isZero();
            assertThat(gpu.isHealthy()).isTrue();
        } finally {
            gpu.close();
            host.close();
        }
    }

    /** One request's inputs as int arrays, and its {@code stop_at} (null: none). */
    private record Call(Map<String, int[]> inputs, String stopAt) {
    }

    @Test
    void everyNodeMatchesTheHostKernelsOnRandomBatches() {
        Random random = new Random(SEED);
        List<Call> tokens = new ArrayList<>();
        List<Call> counts = new ArrayList<>();
        List<Call> steps = new ArrayList<>();
        List<Call> chunks = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            int[] t = random.ints(random.nextInt(40), -1000, 1000).toArray();
            tokens.add(new Call(Map.of(CounterModel.TOKENS, t), null));
            counts.add(new Call(Map.of(CounterModel.H, random.ints(random.nextInt(40)).toArray(),
                    CounterModel.BASE, new int[] {random.nextInt()}), null));
            int state = random.nextInt(100);
            String stopAt = switch (i % 3) {
                case 0 -> null;
                case 1 -> Integer.toString(state + 1); // hits it in this step
                default -> Integer.toString(state + 5);
            };
            steps.add(new Call(Map.of(CounterModel.STATE, new int[] {state}), stopAt));
            chunks.add(new Call(Map.of(CounterModel.TOKEN_STREAM, random.ints(i % 3).toArray()), null));
        }
        compare(CounterModel.EMBED, tokens);
        compare(CounterModel.OFFSET, tokens);
        compare(CounterModel.COUNT, counts);
        compare(CounterModel.STEP, steps);
        compare(CounterModel.DETOK, chunks);
    }

    @Test
    void aBadRequestFailsAloneAsOnTheHost() {
        compare(CounterModel.COUNT, List.of(
                new Call(Map.of(CounterModel.H, new int[] {1, 2}, CounterModel.BASE, new int[] {3}), null),
                new Call(Map.of(CounterModel.H, new int[] {1}, CounterModel.BASE, new int[] {3, 4}), null),
                new Call(Map.of(CounterModel.H, new int[] {5}, CounterModel.BASE, new int[] {6}), null)));
        compare(CounterModel.STEP, List.of(
                new Call(Map.of(CounterModel.STATE, new int[] {1}), "not-a-number"),
                new Call(Map.of(CounterModel.STATE, new int[] {1, 2}), null),
                new Call(Map.of(CounterModel.STATE, new int[] {7}), "8")));
    }

    private void compare(String node, List<Call> calls) {
        List<Map<String, Object>> expected = run(onHost, host, node, calls);
        List<Map<String, Object>> actual = run(onGpu, gpu, node, calls);
        assertThat(actual).as(node).isEqualTo(expected);
    }

    /** Runs one batch and turns each result into plain values (outputs by name, finish, whether it failed). */
    private static List<Map<String, Object>> run(ModelKernels kernels, Device device, String node, List<Call> calls) {
        List<NodeCall> batch = new ArrayList<>();
        List<Tensor> inputs = new ArrayList<>();
        int i = 0;
        for (Call c : calls) {
            Map<String, Tensor> in = new LinkedHashMap<>();
            c.inputs().forEach((name, v) -> {
                Tensor t = Int32Tensors.write(device, v);
                inputs.add(t);
                in.put(name, t);
            });
            Map<String, String> meta = c.stopAt() == null ? Map.of() : Map.of(CounterModel.STOP_AT, c.stopAt());
            batch.add(new NodeCall("r-" + i++, in, new CurrentForwardPassInfo("r", CounterModel.DECODE, false, 0, 0, 8,
                    null, meta, null, null, null, null), new NestedLoopIndices(List.of(), Map.of(), 0)));
        }
        List<NodeResult> results = kernels.kernel(node).forward(device, batch);
        List<Map<String, Object>> plain = new ArrayList<>();
        for (NodeResult r : results) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("failed", r.failed());
            p.put("finish", r.finish());
            r.outputs().forEach((name, t) -> {
                p.put(name, List.of(t.dtype(), t.dims(), Arrays.stream(Int32Tensors.read(device, t)).boxed().toList()));
                device.free(t.buffer());
            });
            plain.add(p);
        }
        inputs.forEach(t -> device.free(t.buffer()));
        return plain;
    }
}
