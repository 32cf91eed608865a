package io.mstar.wire;

import java.util.Map;

/**
 * A worker reporting requests it can no longer serve.
 *
 * <p>A map of request id to error message rather than ids plus one message, because per-request
 * stages (input preparation, postprocess) give each request its own error, and one step can fail
 * several requests for different reasons.
 *
 * @param errors     request id to error message
 * @param errorTypes request id to the error's stable type (a project extension; default empty). A request of
 *                   {@code errors} missing here has type {@link WorkerErrorType#UNKNOWN}
 */
public record FailRequests(Map<String, String> errors, Map<String, WorkerErrorType> errorTypes)
        implements ConductorMessageBody {

    public FailRequests {
        errors = Canonical.requiredMap(errors, "errors");
        errorTypes = Canonical.optionalMap(errorTypes, "error_types");
    }

    /** Failures whose types are not known. */
    public FailRequests(Map<String, String> errors) {
        this(errors, Map.of());
    }

    /** One request failed with {@code type}. */
    public static FailRequests of(String requestId, WorkerErrorType type, String error) {
        return new FailRequests(Map.of(requestId, error), Map.of(requestId, type));
    }

    /** The stable type of {@code requestId}'s error. */
    public WorkerErrorType typeOf(String requestId) {
        return errorTypes.getOrDefault(requestId, WorkerErrorType.UNKNOWN);
    }
}
