package io.mstar.worker.kernel.counter;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.mstar.model.CounterModel;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.streaming.FixedChunkPolicy;

/**
 * The {@link CounterModel}'s kernels in plain Java, exactly as its javadoc states them (all {@code int32}). They
 * copy through {@link Device#copyToHost}/{@link Device#copyFromHost}, so they run on any device, and are the
 * reference the CUDA kernels are compared with.
 */
public final class CounterHostKernels {

    private CounterHostKernels() {
    }

    public static ModelKernels kernels() {
        return new ModelKernels(CounterModel.NAME, Map.of(
                CounterModel.EMBED, perRequest(CounterHostKernels::embed),
                CounterModel.OFFSET, perRequest(CounterHostKernels::offset),
                CounterModel.COUNT, perRequest(CounterHostKernels::count),
                CounterModel.STEP, new Step(),
                CounterModel.DETOK, perRequest(CounterHostKernels::detok)),
                Map.of(CounterModel.TOKEN_STREAM, new FixedChunkPolicy(CounterModel.CHUNK_SIZE)));
    }

    private static Map<String, Tensor> embed(Device d, NodeCall c) {
        return Map.of(CounterModel.H, Int32Tensors.write(d, plusOne(Int32Tensors.read(d, c.input(CounterModel.TOKENS)))));
    }

    private static Map<String, Tensor> offset(Device d, NodeCall c) {
        int[] tokens = Int32Tensors.read(d, c.input(CounterModel.TOKENS));
        return Map.of(CounterModel.BASE, Int32Tensors.write(d, new int[] {sum(tokens)}));
    }

    private static Map<String, Tensor> detok(Device d, NodeCall c) {
        int[] chunk = Int32Tensors.read(d, c.input(CounterModel.TOKEN_STREAM));
        return Map.of(CounterModel.TEXT, Int32Tensors.write(d, timesTen(chunk)));
    }

    private static Map<String, Tensor> count(Device d, NodeCall c) {
        int[] base = Int32Tensors.read(d, c.input(CounterModel.BASE));
        if (base.length != 1) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "base must hold one value, has " + base.length);
        }
        int state = sum(Int32Tensors.read(d, c.input(CounterModel.H))) + base[0];
        return outputs(d, Map.of(CounterModel.STATE, new int[] {state}, CounterModel.PREFILL_OUT, new int[] {state}));
    }

    /**
     * {@code state' = state + 1} to three edges; finish when {@code state'} reaches {@code step_metadata.stop_at},
     * and only then a fourth output, {@code stopped}, which the conductor's policy reads as "the loop hit stop_at".
     */
    private static final class Step implements NodeKernel {
        @Override
        public List<NodeResult> forward(Device device, List<NodeCall> batch) {
            List<NodeResult> results = new ArrayList<>(batch.size());
            for (NodeCall call : batch) {
                try {
                    int[] state = Int32Tensors.read(device, call.input(CounterModel.STATE));
                    if (state.length != 1) {
                        throw new KernelException(KernelException.Reason.BAD_INPUT, "state must hold one value");
                    }
                    int next = state[0] + 1;
                    String stopAt = call.info().stepMetadata().get(CounterModel.STOP_AT);
                    boolean finish = stopAt != null && Integer.parseInt(stopAt) == next;
                    Map<String, int[]> values = new LinkedHashMap<>();
                    values.put(CounterModel.STATE, new int[] {next});
                    values.put(CounterModel.TOKEN, new int[] {next});
                    values.put(CounterModel.TOKEN_STREAM, new int[] {next});
                    if (finish) {
                        values.put(CounterModel.STOPPED, new int[] {next});
                    }
                    results.add(NodeResult.of(outputs(device, values), finish));
                } catch (KernelException | NumberFormatException e) {
                    results.add(NodeResult.failed(e));
                }
            }
            return results;
        }
    }

    /** Writes every array as a fresh tensor; frees the ones already written if one fails. */
    static Map<String, Tensor> outputs(Device device, Map<String, int[]> values) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        try {
            values.forEach((name, v) -> out.put(name, Int32Tensors.write(device, v)));
        } catch (RuntimeException e) {
            out.values().forEach(t -> device.free(t.buffer()));
            throw e;
        }
        return out;
    }

    /** A kernel computing each request on its own, a bad input failing only that request. */
    interface PerRequest {
        Map<String, Tensor> apply(Device device, NodeCall call);
    }

    static NodeKernel perRequest(PerRequest body) {
        return (device, batch) -> {
            List<NodeResult> results = new ArrayList<>(batch.size());
            for (NodeCall call : batch) {
                try {
                    results.add(NodeResult.of(body.apply(device, call)));
                } catch (KernelException e) {
                    results.add(NodeResult.failed(e));
                }
            }
            return results;
        };
    }

    private static int[] plusOne(int[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[i] + 1;
        }
        return out;
    }

    private static int[] timesTen(int[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[i] * 10;
        }
        return out;
    }

    private static int sum(int[] v) {
        int s = 0;
        for (int x : v) {
            s += x;
        }
        return s;
    }
}
