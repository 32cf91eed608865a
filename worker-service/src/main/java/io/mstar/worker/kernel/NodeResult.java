package io.mstar.worker.kernel;

import java.util.Map;
import java.util.Objects;

import io.mstar.wire.WorkerErrorType;

/**
 * One request's outcome of a batch, in the order of the calls.
 *
 * @param outputs tensors by output edge name, each a fresh buffer now owned by the engine (the kernel keeps no
 *                handle to it); empty for an error
 * @param finish  the kernel's stop signal (EOS, a stop value): the enclosing loop ends after this iteration
 * @param error   why this request failed, or null; a failed request fails alone and the kernel has already
 *                freed whatever it allocated for it
 * @param errorType the stable type of {@code error}, null when it succeeded
 */
public record NodeResult(Map<String, Tensor> outputs, boolean finish, String error, WorkerErrorType errorType) {

    public NodeResult {
        outputs = Map.copyOf(outputs);
        if (error != null && !outputs.isEmpty()) {
            throw new IllegalArgumentException("a failed result carries no outputs");
        }
        if ((error == null) != (errorType == null)) {
            throw new IllegalArgumentException("an error and its type go together");
        }
    }

    public static NodeResult of(Map<String, Tensor> outputs) {
        return new NodeResult(outputs, false, null, null);
    }

    public static NodeResult of(Map<String, Tensor> outputs, boolean finish) {
        return new NodeResult(outputs, finish, null, null);
    }

    public static NodeResult failed(WorkerErrorType type, String error) {
        return new NodeResult(Map.of(), false, Objects.requireNonNull(error, "error"), Objects.requireNonNull(type));
    }

    /** This request failed with {@code e}, typed by its class ({@link FailureTypes}). */
    public static NodeResult failed(RuntimeException e) {
        return failed(FailureTypes.of(e, WorkerErrorType.KERNEL_FAILED), String.valueOf(e.getMessage()));
    }

    public boolean failed() {
        return error != null;
    }
}
