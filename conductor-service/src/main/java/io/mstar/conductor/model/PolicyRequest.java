package io.mstar.conductor.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.mstar.graph.TensorPointerInfo;

/**
 * What a policy knows of a request from the client.
 *
 * @param requestId   the request id
 * @param maxTokens   the client's output-token budget (at least 1)
 * @param modelKwargs model-specific string arguments ({@code model_kwargs})
 * @param inputs      input name to the descriptors of the conductor-held tensors made from the client's inputs
 */
public record PolicyRequest(String requestId, int maxTokens, Map<String, String> modelKwargs,
        Map<String, List<TensorPointerInfo>> inputs) {

    public PolicyRequest {
        Objects.requireNonNull(requestId, "requestId");
        modelKwargs = Map.copyOf(modelKwargs);
        inputs = Map.copyOf(inputs);
    }
}
