package io.mstar.worker.kernel.onnx;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/**
 * A graph node computed by ONNX Runtime on the CPU, as its {@link OnnxNodeSpec} says: one session, opened when the
 * kernel is built and checked against the spec then (every mapped input and output exists with the declared element
 * type, every graph input is fed), so a bad model fails the worker's start-up, not its requests.
 *
 * <p>Each call's inputs are checked against the graph (present, element type, rank, fixed axes, bytes); a call that
 * fails a check fails alone with {@code invalid_input}. The others run once each ({@code PER_REQUEST}) or as one
 * padded run per group of calls whose unpadded axes agree ({@code PAD}). Inputs are copied once, from the device into
 * the direct buffer ONNX Runtime reads; outputs once more than ONNX Runtime's own copy, into fresh device buffers
 * handed to the engine. A run that fails (ONNX Runtime's error, a device copy) fails its call with ONNX Runtime's
 * message; a padded group that fails runs again call by call, so only the call at fault fails. Only a fatal
 * {@link DeviceException} leaves {@link #forward}, after the kernel has freed its outputs.
 */
public final class OnnxNodeKernel implements NodeKernel, AutoCloseable {

    /**
     * A graph input or output as the node maps it.
     *
     * @param shape declared dims, -1 where free
     * @param axes  declared axis names ({@code dim_param}), empty where none
     */
    private record Port(String signal, String name, OnnxJavaType type, long[] shape, String[] axes) {

        String dtype() {
            return OrtTensors.wireDtype(type);
        }

        String declared() {
            StringBuilder s = new StringBuilder("[");
            for (int a = 0; a < shape.length; a++) {
                s.append(a > 0 ? ", " : "").append(shape[a] >= 0 ? Long.toString(shape[a]) : axes[a].isEmpty() ? "?"
                        : axes[a]);
            }
            return s.append(']').toString();
        }
    }

    /**
     * A call that passed the checks.
     *
     * @param inputs  its tensors in the order of {@link #inputs}
     * @param rows    its extent along axis 0 (PAD)
     * @param lengths its extent along each padded axis (PAD)
     * @param group   its extents along every other axis: calls run together only when these agree (PAD)
     */
    private record Member(int index, List<Tensor> inputs, long rows, Map<String, Long> lengths, List<Long> group) {
    }

    private final OnnxNodeSpec spec;
    private final boolean pad;
    private final OrtSession session;
    private final List<Port> inputs = new ArrayList<>();
    private final List<Port> outputs = new ArrayList<>();
    private final Set<String> outputNames = new LinkedHashSet<>();
    private final Port mask;
    private boolean closed;

    /** Opens and checks the model; a file that does not load or does not fit the spec is an {@link OnnxModelException}. */
    public OnnxNodeKernel(OnnxNodeSpec spec) {
        OrtTensors.requireLittleEndian();
        this.spec = spec;
        this.pad = spec.batching() == OnnxNodeSpec.Batching.PAD;
        this.session = OnnxSessions.open(spec.model(), spec.intraOpThreads());
        try {
            Map<String, NodeInfo> graphInputs = session.getInputInfo();
            Map<String, NodeInfo> graphOutputs = session.getOutputInfo();
            spec.inputs().forEach((signal, name) -> inputs.add(port(graphInputs, "input", name, signal)));
            spec.outputs().forEach((name, signal) -> outputs.add(port(graphOutputs, "output", name, signal)));
            outputs.forEach(p -> outputNames.add(p.name()));
            mask = spec.mask() == null ? null : port(graphInputs, "input", spec.mask(), "(mask)");
            checkGraph(graphInputs.keySet());
        } catch (OrtException e) {
            throw OnnxSessions.closeAfter(session, new OnnxModelException("ONNX model " + spec.model() + ": its inputs and outputs could not "
                    + "be read: " + e.getMessage(), e));
        } catch (RuntimeException e) {
            throw OnnxSessions.closeAfter(session, e);
        }
    }

    private Port port(Map<String, NodeInfo> graph, String kind, String name, String signal) {
        NodeInfo info = graph.get(name);
        if (info == null) {
            throw new OnnxModelException("ONNX model " + spec.model() + " has no " + kind + " '" + name
                    + "' (mapped for signal '" + signal + "'); its " + kind + "s are " + graph.keySet());
        }
        if (!(info.getInfo() instanceof TensorInfo t) || !OrtTensors.supported(t.type)) {
            throw new OnnxModelException("ONNX model " + spec.model() + ": " + kind + " '" + name + "' is "
                    + info.getInfo() + ", not a tensor this kernel passes");
        }
        long[] shape = t.getShape();
        String[] axes = t.getDimensionNames();
        if (axes == null || axes.length != shape.length) {
            axes = new String[shape.length];
        }
        axes = Arrays.stream(axes).map(a -> a == null ? "" : a).toArray(String[]::new);
        return new Port(signal, name, t.type, shape, axes);
    }

    private void checkGraph(Set<String> graphInputs) {
        for (Port p : inputs) {
            OnnxJavaType declared = spec.dtypes().get(p.signal());
            if (declared != null && declared != p.type()) {
                throw new OnnxModelException("signal '" + p.signal() + "' is declared " + declared + ", but input '"
                        + p.name() + "' of ONNX model " + spec.model() + " takes " + p.type());
            }
        }
        for (String name : graphInputs) {
            if (!spec.inputs().containsValue(name) && !name.equals(spec.mask())) {
                throw new OnnxModelException("input '" + name + "' of ONNX model " + spec.model() + " is fed by no "
                        + "signal (inputs maps " + spec.inputs() + ")");
            }
        }
        if (!pad) {
            return;
        }
        List<Port> batched = new ArrayList<>(inputs);
        batched.addAll(outputs);
        if (mask != null) {
            batched.add(mask);
        }
        for (Port p : batched) {
            if (p.shape().length == 0 || p.shape()[0] >= 0 || spec.padAxes().contains(p.axes()[0])) {
                throw new OnnxModelException("PAD concatenates along axis 0, which '" + p.name() + "' of ONNX model "
                        + spec.model() + " does not leave free: " + p.declared());
            }
        }
        for (String axis : spec.padAxes()) {
            if (inputs.stream().noneMatch(p -> Arrays.asList(p.axes()).subList(1, p.axes().length).contains(axis))) {
                throw new OnnxModelException("padAxes names '" + axis + "', which no mapped input of ONNX model "
                        + spec.model() + " has: " + inputs.stream().map(p -> p.name() + p.declared()).toList());
            }
        }
        if (mask != null) {
            for (int a = 1; a < mask.axes().length; a++) {
                if (!spec.padAxes().contains(mask.axes()[a])) {
                    throw new OnnxModelException("mask '" + mask.name() + "' of ONNX model " + spec.model() + " has axis "
                            + a + " of " + mask.declared() + ", which is not a padded axis " + spec.padAxes());
                }
            }
        }
    }

    @Override
    public List<NodeResult> forward(Device device, List<NodeCall> batch) {
        if (closed) {
            throw new IllegalStateException("the ONNX kernel of " + spec.model() + " is closed");
        }
        NodeResult[] results = new NodeResult[batch.size()];
        Map<List<Long>, List<Member>> groups = new LinkedHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            try {
                Member m = member(i, batch.get(i));
                // PER_REQUEST: a group of its own; PAD: with the calls whose unpadded axes agree
                groups.computeIfAbsent(pad ? m.group() : List.of((long) i), k -> new ArrayList<>()).add(m);
            } catch (KernelException e) {
                results[i] = NodeResult.failed(e);
            }
        }
        try {
            for (List<Member> group : groups.values()) {
                run(device, group, results);
            }
        } catch (DeviceException fatal) {
            for (NodeResult r : results) {
                if (r != null) {
                    r.outputs().values().forEach(t -> device.free(t.buffer()));
                }
            }
            throw fatal;
        }
        return List.of(results);
    }

    /** The call's inputs checked against the graph; a call that does not fit is a {@link KernelException}. */
    private Member member(int index, NodeCall call) {
        List<Tensor> tensors = new ArrayList<>();
        long rows = -1;
        String rowsFrom = null;
        Map<String, Long> lengths = new HashMap<>();
        Map<String, String> lengthFrom = new HashMap<>();
        List<Long> group = new ArrayList<>();
        for (Port p : inputs) {
            Tensor t = call.inputs().get(p.signal());
            if (t == null) {
                throw badInput("request " + call.requestId() + " has no input '" + p.signal() + "'; the node takes "
                        + spec.inputs().keySet());
            }
            if (!p.dtype().equals(t.dtype())) {
                throw badInput("input '" + p.signal() + "' is " + t.dtype() + "; input '" + p.name() + "' of "
                        + spec.model() + " takes " + p.dtype());
            }
            List<Long> dims = t.dims();
            boolean fits = dims.size() == p.shape().length;
            for (int a = 0; fits && a < dims.size(); a++) {
                fits = dims.get(a) >= 0 && (p.shape()[a] < 0 || p.shape()[a] == dims.get(a));
            }
            if (!fits) {
                throw badInput("input '" + p.signal() + "' has shape " + dims + "; input '" + p.name() + "' of "
                        + spec.model() + " takes " + p.declared());
            }
            long bytes = t.elementCount() * p.type().size;
            if (t.buffer().nbytes() < bytes) {
                throw badInput("input '" + p.signal() + "' holds " + t.buffer().nbytes() + " bytes; " + p.dtype()
                        + " of shape " + dims + " needs " + bytes);
            }
            if (pad) {
                if (rowsFrom != null && rows != dims.get(0)) {
                    throw badInput("inputs '" + rowsFrom + "' and '" + p.signal() + "' disagree on axis 0: " + rows
                            + " and " + dims.get(0) + " rows");
                }
                rows = dims.get(0);
                rowsFrom = p.signal();
                for (int a = 1; a < dims.size(); a++) {
                    String axis = p.axes()[a];
                    if (!spec.padAxes().contains(axis)) {
                        group.add(dims.get(a));
                        continue;
                    }
                    Long before = lengths.putIfAbsent(axis, dims.get(a));
                    if (before != null && !before.equals(dims.get(a))) {
                        throw badInput("inputs '" + lengthFrom.get(axis) + "' and '" + p.signal() + "' disagree on "
                                + axis + ": " + before + " and " + dims.get(a));
                    }
                    lengthFrom.putIfAbsent(axis, p.signal());
                }
            }
            tensors.add(t);
        }
        return new Member(index, tensors, rows, lengths, group);
    }

    private static KernelException badInput(String message) {
        return new KernelException(KernelException.Reason.BAD_INPUT, message);
    }

    /**
     * One run over {@code group}; each of its calls gets its result. A group that failed runs again call by call, so
     * that only the call at fault fails; a call that fails alone gets ONNX Runtime's message.
     */
    private void run(Device device, List<Member> group, NodeResult[] results) {
        RuntimeException failure;
        Map<String, OnnxTensor> feeds = new HashMap<>();
        try {
            feed(device, group, feeds);
            try (OrtSession.Result result = session.run(feeds, outputNames)) {
                deliver(device, group, result, results);
            }
            return;
        } catch (OrtException e) {
            failure = new KernelException(e.getCode() == OrtException.OrtErrorCode.ORT_INVALID_ARGUMENT
                    ? KernelException.Reason.BAD_INPUT : KernelException.Reason.RUN_FAILED,
                    "ONNX Runtime failed on " + spec.model() + ": " + e.getMessage(), e);
        } catch (DeviceException e) {
            if (e.isFatal()) {
                throw e;
            }
            failure = e;
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            OnnxValue.close(feeds);
        }
        if (group.size() == 1) {
            results[group.get(0).index()] = NodeResult.failed(failure);
            return;
        }
        for (Member m : group) {
            run(device, List.of(m), results);
        }
    }

    /** The group's inputs into ONNX Runtime tensors, padded with zeros, and the mask; {@code feeds} gets each made. */
    private void feed(Device device, List<Member> group, Map<String, OnnxTensor> feeds) throws OrtException {
        long rows = group.stream().mapToLong(Member::rows).sum();
        Map<String, Long> longest = new HashMap<>();
        group.forEach(m -> m.lengths().forEach((axis, n) -> longest.merge(axis, n, Math::max)));
        for (int k = 0; k < inputs.size(); k++) {
            Port p = inputs.get(k);
            long[] whole = dims(group.get(0).inputs().get(k));
            if (pad) {
                whole[0] = rows;
                for (int a = 1; a < whole.length; a++) {
                    whole[a] = longest.getOrDefault(p.axes()[a], whole[a]);
                }
            }
            ByteBuffer buffer = OrtTensors.direct(p.type(), PaddedBlocks.count(whole));
            long row0 = 0;
            for (Member m : group) {
                Tensor t = m.inputs().get(k);
                PaddedBlocks.forEach(dims(t), whole, row0, (partOffset, wholeOffset, n) -> device.copyToHost(
                        t.buffer(), partOffset * p.type().size, slice(buffer, wholeOffset, n, p.type())));
                row0 += m.rows();
            }
            feeds.put(p.name(), OrtTensors.wrap(buffer, p.type(), whole));
        }
        if (mask != null) {
            long[] whole = new long[mask.shape().length];
            whole[0] = rows;
            for (int a = 1; a < whole.length; a++) {
                whole[a] = longest.get(mask.axes()[a]);
            }
            ByteBuffer buffer = OrtTensors.direct(mask.type(), PaddedBlocks.count(whole));
            long row0 = 0;
            for (Member m : group) {
                long[] part = whole.clone();
                part[0] = m.rows();
                for (int a = 1; a < part.length; a++) {
                    part[a] = m.lengths().get(mask.axes()[a]);
                }
                PaddedBlocks.forEach(part, whole, row0, (partOffset, wholeOffset, n) -> {
                    for (long i = wholeOffset; i < wholeOffset + n; i++) {
                        OrtTensors.put(buffer, mask.type(), Math.toIntExact(i), 1);
                    }
                });
                row0 += m.rows();
            }
            feeds.put(mask.name(), OrtTensors.wrap(buffer, mask.type(), whole));
        }
    }

    /**
     * Each call's share of the outputs into fresh device buffers: its rows, cut back to its lengths (PAD), or the
     * whole output (PER_REQUEST). Throws only before any call has its result, or a fatal {@link DeviceException};
     * anything else fails the one call it happened to.
     */
    private void deliver(Device device, List<Member> group, OrtSession.Result result, NodeResult[] results) {
        long rows = group.stream().mapToLong(Member::rows).sum();
        List<long[]> shapes = new ArrayList<>();
        List<ByteBuffer> bytes = new ArrayList<>();
        for (Port p : outputs) {
            OnnxTensor t = OrtTensors.tensor(result.get(p.name()).orElse(null), p.name());
            long[] shape = t.getInfo().getShape();
            if (pad && (shape.length == 0 || shape[0] != rows)) {
                throw new KernelException(KernelException.Reason.RUN_FAILED, "output '" + p.name() + "' of "
                        + spec.model() + " has shape " + Arrays.toString(shape) + " for a batch of " + rows + " rows");
            }
            shapes.add(shape);
            bytes.add(OrtTensors.bytes(t));
        }
        long row0 = 0;
        for (Member m : group) {
            try {
                results[m.index()] = NodeResult.of(outputs(device, m, row0, shapes, bytes));
            } catch (RuntimeException e) {
                if (e instanceof DeviceException d && d.isFatal()) {
                    throw d;
                }
                results[m.index()] = NodeResult.failed(e);
            }
            row0 += m.rows();
        }
    }

    private Map<String, Tensor> outputs(Device device, Member m, long row0, List<long[]> shapes, List<ByteBuffer> bytes) {
        Map<String, Tensor> made = new HashMap<>();
        try {
            for (int k = 0; k < outputs.size(); k++) {
                Port p = outputs.get(k);
                long[] whole = shapes.get(k);
                long[] part = whole.clone();
                if (pad) {
                    part[0] = m.rows();
                    for (int a = 1; a < part.length; a++) {
                        Long length = m.lengths().get(p.axes()[a]);
                        if (length != null && length > whole[a]) {
                            throw new KernelException(KernelException.Reason.RUN_FAILED, "output '" + p.name()
                                    + "' of " + spec.model() + " has " + whole[a] + " along " + p.axes()[a]
                                    + ", less than the request's " + length);
                        }
                        part[a] = length != null ? length : whole[a];
                    }
                }
                DeviceBuffer buffer = device.allocate(PaddedBlocks.count(part) * p.type().size);
                made.put(p.signal(), new Tensor(buffer, p.dtype(), Arrays.stream(part).boxed().toList()));
                ByteBuffer from = bytes.get(k);
                PaddedBlocks.forEach(part, whole, row0, (partOffset, wholeOffset, n) -> device.copyFromHost(
                        slice(from, wholeOffset, n, p.type()), buffer, partOffset * p.type().size));
            }
            return made;
        } catch (RuntimeException e) {
            made.values().forEach(t -> device.free(t.buffer()));
            throw e;
        }
    }

    private static ByteBuffer slice(ByteBuffer buffer, long offset, long elements, OnnxJavaType type) {
        return buffer.slice(Math.toIntExact(offset * type.size), Math.toIntExact(elements * type.size));
    }

    private static long[] dims(Tensor t) {
        return t.dims().stream().mapToLong(Long::longValue).toArray();
    }

    /** Closes the session, once; a second close does nothing. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        OnnxSessions.close(session, spec.model());
    }
}
