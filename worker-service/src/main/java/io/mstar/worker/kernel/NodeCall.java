package io.mstar.worker.kernel;

import java.util.Map;
import java.util.Objects;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.request.CurrentForwardPassInfo;

/**
 * One request's share of a batch: what a node kernel computes from.
 *
 * @param requestId the wire request id (for logs and per-request kernel state; never a metric tag)
 * @param inputs    input tensors by signal name; they stay the engine's: a kernel reads them and neither frees
 *                  nor returns them
 * @param info      the request's current forward pass (walk, seed, {@code step_metadata}, ...)
 * @param position  where this call stands in the walk's loops (iteration of each enclosing loop, forward index)
 */
public record NodeCall(String requestId, Map<String, Tensor> inputs, CurrentForwardPassInfo info,
        NestedLoopIndices position) {

    public NodeCall {
        Objects.requireNonNull(requestId, "requestId");
        inputs = Map.copyOf(inputs);
        Objects.requireNonNull(info, "info");
        Objects.requireNonNull(position, "position");
    }

    /** The input named {@code signal}; a missing input is a kernel bug, reported as such. */
    public Tensor input(String signal) {
        Tensor tensor = inputs.get(signal);
        if (tensor == null) {
            throw new IllegalArgumentException("request " + requestId + " has no input '" + signal + "', only "
                    + inputs.keySet());
        }
        return tensor;
    }
}
