package io.mstar.wire;

import java.util.Map;

/**
 * A worker reporting requests it can no longer serve.
 *
 * <p>A map of request id to error message rather than ids plus one message, because per-request
 * stages (input preparation, postprocess) give each request its own error, and one step can fail
 * several requests for different reasons.
 *
 * @param errors request id to error message
 */
public record FailRequests(Map<String, String> errors) implements ConductorMessageBody {

    public FailRequests {
        errors = Canonical.requiredMap(errors, "errors");
    }
}
