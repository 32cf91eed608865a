package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.request.SamplingConfig;

/**
 * A validated client request, handed from the HTTP thread to the lifecycle loop.
 *
 * @param requestId   the client's id or a generated one
 * @param model       the model name
 * @param inputs      input name to tensor (already decoded from text, token ids or base64)
 * @param maxTokens   output-token budget, at least 1
 * @param sampling    sampling parameters applied to every node of the model, or null for the engines' defaults
 * @param modelKwargs model-specific string arguments
 * @param seed        explicit seed, or null for one derived from the request id
 * @param deadline    the client's deadline from submission, or null for the deployment's request timeout
 */
public record Submission(String requestId, String model, Map<String, InputTensor> inputs, int maxTokens,
        SamplingConfig sampling, Map<String, String> modelKwargs, Long seed, Duration deadline) {

    public Submission {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(model, "model");
        inputs = Map.copyOf(inputs);
        modelKwargs = Map.copyOf(modelKwargs);
    }

    /**
     * Throws {@link ConductorException} ({@code INVALID_INPUT}) unless the inputs are exactly those {@code dtypes}
     * names, each of its dtype: a model's policy's {@code inputDtypes}.
     */
    void requireInputs(Map<String, String> dtypes) {
        if (!inputs.keySet().equals(dtypes.keySet())) {
            throw new ConductorException(ErrorType.INVALID_INPUT, "model '" + model + "' takes inputs "
                    + new TreeSet<>(dtypes.keySet()) + ", got " + new TreeSet<>(inputs.keySet()));
        }
        inputs.forEach((name, tensor) -> {
            String want = dtypes.get(name);
            if (!want.equals(tensor.dtype())) {
                throw new ConductorException(ErrorType.INVALID_INPUT, "input '" + name + "' must be " + want
                        + ", was " + tensor.dtype());
            }
        });
    }

    /** One input tensor: dtype name, shape and little-endian contiguous bytes. */
    public record InputTensor(String dtype, List<Long> dims, byte[] data) {
        public InputTensor {
            Objects.requireNonNull(dtype, "dtype");
            dims = List.copyOf(dims);
            Objects.requireNonNull(data, "data");
        }
    }
}
