package io.mstar.wire;

import java.util.Objects;

/** The client (through the conductor's front end) giving up on a request. */
public record AbortRequest(String requestId) implements ConductorMessageBody, RequestScoped {

    public AbortRequest {
        Objects.requireNonNull(requestId, "request_id");
    }
}
