package io.mstar.worker.kernel.onnx;

import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import ai.onnxruntime.OnnxJavaType;

/**
 * How one graph node runs an ONNX model ({@link OnnxNodeKernel}).
 *
 * @param model          the {@code .onnx} file: a path, or {@code classpath:} and a resource name
 * @param inputs         node input signal to the graph input it feeds
 * @param outputs        graph output to the node output signal it becomes
 * @param dtypes         node input signal to the element type its graph input takes ({@code FLOAT}, {@code INT64},
 *                       {@code INT32}, ...), checked against the graph at load; a signal left out takes the graph
 *                       input's own type (a deployment file names no ORT types). A call's tensor must carry that
 *                       type's wire name ({@code float32}, ...)
 * @param batching       one run per call, or one padded run per batch
 * @param padAxes        for {@link Batching#PAD}: the symbolic axis names of the graph ({@code dim_param}, say
 *                       {@code sequence_length}) padded to the batch's longest; every input and output axis of that
 *                       name is one length per request. Empty for {@link Batching#PER_REQUEST}
 * @param mask           for {@link Batching#PAD}: a graph input the kernel builds, 1 at a request's real positions
 *                       and 0 at padding, over axis 0 and padded axes only; null for none
 * @param intraOpThreads ONNX Runtime's threads within one run, at least 1
 */
public record OnnxNodeSpec(String model, Map<String, String> inputs, Map<String, String> outputs,
        Map<String, OnnxJavaType> dtypes, Batching batching, Set<String> padAxes, String mask, int intraOpThreads) {

    public enum Batching {
        /** One run per call: any shapes the graph takes, nothing padded. */
        PER_REQUEST,
        /**
         * The calls concatenated along axis 0, each input padded with zeros to the batch's longest along
         * {@code padAxes}; each call gets its rows of every output, cut back to its own lengths. Calls whose other
         * axes differ run as separate batches.
         */
        PAD
    }

    public OnnxNodeSpec {
        if (model == null || model.isBlank()) {
            throw new IllegalArgumentException("model must name an .onnx file or a classpath: resource");
        }
        inputs = names("inputs", inputs);
        outputs = names("outputs", outputs);
        Objects.requireNonNull(dtypes, "dtypes");
        for (String signal : inputs.keySet()) {
            OnnxJavaType type = dtypes.get(signal);
            if (type != null && !OrtTensors.supported(type)) {
                throw new IllegalArgumentException("dtypes['" + signal + "'] is " + type + ", which is not passed to "
                        + "ONNX Runtime here");
            }
        }
        for (String signal : dtypes.keySet()) {
            if (!inputs.containsKey(signal)) {
                throw new IllegalArgumentException("dtypes names '" + signal + "', which is not an input signal "
                        + inputs.keySet());
            }
        }
        dtypes = Map.copyOf(dtypes);
        if (new HashSet<>(inputs.values()).size() != inputs.size()) {
            throw new IllegalArgumentException("inputs feed one graph input from two signals: " + inputs);
        }
        if (new HashSet<>(outputs.values()).size() != outputs.size()) {
            throw new IllegalArgumentException("outputs give one signal from two graph outputs: " + outputs);
        }
        Objects.requireNonNull(batching, "batching");
        padAxes = Set.copyOf(Objects.requireNonNull(padAxes, "padAxes"));
        if (batching == Batching.PER_REQUEST && (!padAxes.isEmpty() || mask != null)) {
            throw new IllegalArgumentException("padAxes and mask are for PAD batching; PER_REQUEST pads nothing");
        }
        for (String axis : padAxes) {
            if (axis == null || axis.isBlank()) {
                throw new IllegalArgumentException("padAxes holds a blank axis name");
            }
        }
        if (mask != null) {
            if (mask.isBlank() || padAxes.isEmpty()) {
                throw new IllegalArgumentException("mask '" + mask + "' needs a name and padAxes to mask");
            }
            if (inputs.containsValue(mask)) {
                throw new IllegalArgumentException("mask '" + mask + "' is also fed by an input signal: " + inputs);
            }
        }
        if (intraOpThreads < 1) {
            throw new IllegalArgumentException("intraOpThreads must be at least 1, was " + intraOpThreads);
        }
    }

    /**
     * One run per call, on as many intra-op threads as the JVM has processors: a batch holds the worker's step
     * thread, which waits on the run, so the session's threads are the only computing ones then. The JVM's count,
     * unlike ONNX Runtime's own default (the host's physical cores), respects a container's CPU limit.
     */
    public static OnnxNodeSpec perRequest(String model, Map<String, String> inputs, Map<String, String> outputs,
            Map<String, OnnxJavaType> dtypes) {
        return new OnnxNodeSpec(model, inputs, outputs, dtypes, Batching.PER_REQUEST, Set.of(), null,
                Runtime.getRuntime().availableProcessors());
    }

    /** One padded run per batch, threads as {@link #perRequest}. */
    public static OnnxNodeSpec padded(String model, Map<String, String> inputs, Map<String, String> outputs,
            Map<String, OnnxJavaType> dtypes, Set<String> padAxes, String mask) {
        return new OnnxNodeSpec(model, inputs, outputs, dtypes, Batching.PAD, padAxes, mask,
                Runtime.getRuntime().availableProcessors());
    }

    public OnnxNodeSpec withIntraOpThreads(int threads) {
        return new OnnxNodeSpec(model, inputs, outputs, dtypes, batching, padAxes, mask, threads);
    }

    private static Map<String, String> names(String key, Map<String, String> map) {
        Objects.requireNonNull(map, key);
        if (map.isEmpty()) {
            throw new IllegalArgumentException(key + " must map at least one name");
        }
        Map<String, String> copy = new LinkedHashMap<>();
        map.forEach((from, to) -> {
            if (from == null || from.isBlank() || to == null || to.isBlank()) {
                throw new IllegalArgumentException(key + " maps a blank name: '" + from + "' -> '" + to + "'");
            }
            copy.put(from, to);
        });
        return Collections.unmodifiableMap(copy);
    }
}
