package io.mstar.worker.kernel;

import java.util.Map;
import java.util.Objects;

/**
 * One request's outcome of a batch, in the order of the calls.
 *
 * @param outputs tensors by output edge name, each a fresh buffer now owned by the engine (the kernel keeps no
 *                handle to it); empty for an error
 * @param finish  the kernel's stop signal (EOS, a stop value): the enclosing loop ends after this iteration
 * @param error   why this request failed, or null; a failed request fails alone and the kernel has already
 *                freed whatever it allocated for it
 */
public record NodeResult(Map<String, Tensor> outputs, boolean finish, String error) {

    public NodeResult {
        outputs = Map.copyOf(outputs);
        if (error != null && !outputs.isEmpty()) {
            throw new IllegalArgumentException("a failed result carries no outputs");
        }
    }

    public static NodeResult of(Map<String, Tensor> outputs) {
        return new NodeResult(outputs, false, null);
    }

    public static NodeResult of(Map<String, Tensor> outputs, boolean finish) {
        return new NodeResult(outputs, finish, null);
    }

    public static NodeResult failed(String error) {
        return new NodeResult(Map.of(), false, Objects.requireNonNull(error, "error"));
    }

    public boolean failed() {
        return error != null;
    }
}
