package io.mstar.wire;

import java.util.Objects;

/**
 * Asks a worker to finish what it has in flight for a request and start nothing new: the soft
 * stop that precedes {@link RemoveRequest}.
 *
 * @param requestId the request
 * @param source    who asks; default {@link MessageSource#CONDUCTOR}
 * @param outcome   how the conductor ended the request, or null when the sender does not say (a project extension,
 *                  omitted from the JSON when null): without it a worker cannot tell a completion from an abort
 */
public record DrainRequest(String requestId, MessageSource source, RequestOutcome outcome)
        implements WorkerMessageBody, RequestScoped {

    public DrainRequest {
        Objects.requireNonNull(requestId, "request_id");
        source = source == null ? MessageSource.CONDUCTOR : source;
    }

    /** A drain as the spec shapes it, saying nothing of the outcome. */
    public DrainRequest(String requestId, MessageSource source) {
        this(requestId, source, null);
    }

    /** A drain asked by the conductor for a request that ended with {@code outcome}. */
    public DrainRequest(String requestId, RequestOutcome outcome) {
        this(requestId, MessageSource.CONDUCTOR, outcome);
    }

    /** A drain asked by the conductor, saying nothing of the outcome. */
    public DrainRequest(String requestId) {
        this(requestId, MessageSource.CONDUCTOR, null);
    }
}
