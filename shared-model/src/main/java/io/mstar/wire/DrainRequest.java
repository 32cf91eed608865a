package io.mstar.wire;

import java.util.Objects;

/**
 * Asks a worker to finish what it has in flight for a request and start nothing new: the soft
 * stop that precedes {@link RemoveRequest}.
 *
 * @param requestId the request
 * @param source    who asks; default {@link MessageSource#CONDUCTOR}
 */
public record DrainRequest(String requestId, MessageSource source) implements WorkerMessageBody, RequestScoped {

    public DrainRequest {
        Objects.requireNonNull(requestId, "request_id");
        source = source == null ? MessageSource.CONDUCTOR : source;
    }

    /** A drain asked by the conductor. */
    public DrainRequest(String requestId) {
        this(requestId, MessageSource.CONDUCTOR);
    }
}
