package io.mstar.worker.kernel.cuda;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.mstar.model.CounterModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.counter.CounterHostKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/**
 * The {@link CounterModel}'s five node kernels on a GPU through {@link CounterCudaKernels}, with the semantics,
 * outputs and error behaviour of {@code CounterHostKernels}: every output is a fresh one-dimensional int32 buffer;
 * a bad input (dtype, a {@code base}/{@code state} not holding one value, an unparsable {@code stop_at}) or a
 * non-fatal device error fails only its request, which keeps nothing; any other exception fails the batch after
 * freeing every output the batch made.
 *
 * <p>Completion: launches are asynchronous and {@code forward} returns once they are issued; the engine's step ends
 * with an event recorded after them and waits for it off the loop (docs/worker-runtime.md#the-step-pipeline), so
 * an asynchronous fault is raised against the step that caused it, and outputs are stored only once they hold
 * their values. Publishing synchronizes the device again ({@code TensorPublisher.publish}) before staging, so a
 * descriptor never leaves ahead of the work either way; a same-device consumer is ordered by the single stream
 * anyway. The step kernel reads its finish flag back, which waits too: one round trip per request with a
 * {@code stop_at}, fine for the counter.
 */
public final class CounterCudaNodeKernels {

    private static final long INT32 = 4;

    private final CounterCudaKernels ops;
    private final CudaDevice device;

    private CounterCudaNodeKernels(CounterCudaKernels ops) {
        this.ops = ops;
        this.device = ops.device();
    }

    /** The counter model on {@code ops}' device; the kernels refuse to run on any other device. */
    public static ModelKernels kernels(CounterCudaKernels ops) {
        CounterCudaNodeKernels k = new CounterCudaNodeKernels(ops);
        // Every node swapped, the rest of the model's definition (its chunk policies) kept from the host one.
        return CounterHostKernels.kernels()
                .with(CounterModel.EMBED, k.perRequest(k::embed))
                .with(CounterModel.OFFSET, k.perRequest(k::offset))
                .with(CounterModel.COUNT, k.perRequest(k::count))
                .with(CounterModel.STEP, k.perRequest(k::step))
                .with(CounterModel.DETOK, k.perRequest(k::detok));
    }

    /** The outputs of one request, and its finish flag. */
    private record Computed(Map<String, Tensor> outputs, boolean finish) {
    }

    /** One request's computation; it registers each buffer it allocates in {@code made} before using it. */
    private interface Body {
        Computed apply(NodeCall call, List<DeviceBuffer> made);
    }

    private NodeKernel perRequest(Body body) {
        return (d, batch) -> {
            if (d != device) {
                throw new IllegalArgumentException("counter CUDA kernels are bound to " + device.name() + ", not "
                        + d.name());
            }
            List<NodeResult> results = new ArrayList<>(batch.size());
            List<DeviceBuffer> batchMade = new ArrayList<>();
            try {
                for (NodeCall call : batch) {
                    List<DeviceBuffer> made = new ArrayList<>();
                    try {
                        Computed c = body.apply(call, made);
                        batchMade.addAll(made);
                        results.add(NodeResult.of(c.outputs(), c.finish()));
                    } catch (KernelException | NumberFormatException e) {
                        freeAll(made, e);
                        results.add(NodeResult.failed(e));
                    } catch (DeviceException e) {
                        freeAll(made, e);
                        if (e.isFatal()) {
                            throw e;
                        }
                        results.add(NodeResult.failed(e));
                    } catch (RuntimeException | Error e) {
                        freeAll(made, e);
                        throw e;
                    }
                }
                return results;
            } catch (RuntimeException | Error e) {
                freeAll(batchMade, e);
                throw e;
            }
        };
    }

    private Computed embed(NodeCall call, List<DeviceBuffer> made) {
        Tensor tokens = int32(call, CounterModel.TOKENS);
        long n = tokens.elementCount();
        DeviceBuffer h = allocate(made, n);
        ops.addScalar(tokens.buffer(), h, n, 1);
        return new Computed(Map.of(CounterModel.H, vector(h, n)), false);
    }

    private Computed offset(NodeCall call, List<DeviceBuffer> made) {
        Tensor tokens = int32(call, CounterModel.TOKENS);
        DeviceBuffer base = allocate(made, 1);
        ops.sum(tokens.buffer(), tokens.elementCount(), base);
        return new Computed(Map.of(CounterModel.BASE, vector(base, 1)), false);
    }

    private Computed count(NodeCall call, List<DeviceBuffer> made) {
        Tensor base = int32(call, CounterModel.BASE);
        if (base.elementCount() != 1) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "base must hold one value, has "
                    + base.elementCount());
        }
        Tensor h = int32(call, CounterModel.H);
        DeviceBuffer state = allocate(made, 1);
        ops.sumPlus(h.buffer(), h.elementCount(), base.buffer(), state);
        DeviceBuffer prefill = copyOfOne(made, state);
        return new Computed(Map.of(CounterModel.STATE, vector(state, 1), CounterModel.PREFILL_OUT, vector(prefill, 1)),
                false);
    }

    /**
     * {@code state + 1} to {@code state}, {@code token} and {@code token_stream}; when it reaches
     * {@code step_metadata.stop_at} the loop finishes and a fourth output, {@code stopped}, carries it too.
     */
    private Computed step(NodeCall call, List<DeviceBuffer> made) {
        Tensor state = int32(call, CounterModel.STATE);
        if (state.elementCount() != 1) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "state must hold one value");
        }
        String stopAtText = call.info().stepMetadata().get(CounterModel.STOP_AT);
        Integer stopAt = stopAtText == null ? null : Integer.parseInt(stopAtText);
        DeviceBuffer next = allocate(made, 1);
        boolean finish = false;
        if (stopAt == null) {
            ops.addScalar(state.buffer(), next, 1, 1);
        } else {
            DeviceBuffer flag = device.allocate(INT32);
            try {
                ops.step(state.buffer(), next, stopAt, flag);
                finish = ops.isFinished(flag);
            } finally {
                device.free(flag);
            }
        }
        Map<String, Tensor> outputs = new LinkedHashMap<>();
        outputs.put(CounterModel.STATE, vector(next, 1));
        outputs.put(CounterModel.TOKEN, vector(copyOfOne(made, next), 1));
        outputs.put(CounterModel.TOKEN_STREAM, vector(copyOfOne(made, next), 1));
        if (finish) {
            outputs.put(CounterModel.STOPPED, vector(copyOfOne(made, next), 1));
        }
        return new Computed(outputs, finish);
    }

    private Computed detok(NodeCall call, List<DeviceBuffer> made) {
        Tensor chunk = int32(call, CounterModel.TOKEN_STREAM);
        long n = chunk.elementCount();
        DeviceBuffer text = allocate(made, n);
        ops.mulScalar(chunk.buffer(), text, n, 10);
        return new Computed(Map.of(CounterModel.TEXT, vector(text, n)), false);
    }

    /** A second buffer holding {@code src}'s one value: the device has no copy between buffers, a kernel does it. */
    private DeviceBuffer copyOfOne(List<DeviceBuffer> made, DeviceBuffer src) {
        DeviceBuffer copy = allocate(made, 1);
        ops.addScalar(src, copy, 1, 0);
        return copy;
    }

    private DeviceBuffer allocate(List<DeviceBuffer> made, long int32s) {
        DeviceBuffer buffer = device.allocate(int32s * INT32);
        made.add(buffer);
        return buffer;
    }

    private static Tensor int32(NodeCall call, String signal) {
        Tensor t = call.input(signal);
        if (!Int32Tensors.DTYPE.equals(t.dtype())) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, signal + ": expected int32, got " + t.dtype());
        }
        return t;
    }

    private static Tensor vector(DeviceBuffer buffer, long n) {
        return new Tensor(buffer, Int32Tensors.DTYPE, List.of(n));
    }

    private void freeAll(List<DeviceBuffer> buffers, Throwable cause) {
        for (DeviceBuffer b : buffers) {
            try {
                device.free(b);
            } catch (RuntimeException suppressed) {
                cause.addSuppressed(suppressed);
            }
        }
        buffers.clear();
    }
}
