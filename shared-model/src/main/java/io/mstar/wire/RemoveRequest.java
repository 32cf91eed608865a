package io.mstar.wire;

import java.util.Objects;

/**
 * The hard removal of a request from a worker: its state and tensors are freed.
 *
 * @param requestId   the request
 * @param source      who asks; default {@link MessageSource#CONDUCTOR}
 * @param afterTpSeq  under tensor parallelism, remove only after replaying the leader's batch
 *                    with this {@code spec_seq}; -1 (default) removes at once
 */
public record RemoveRequest(String requestId, MessageSource source, long afterTpSeq)
        implements WorkerMessageBody, RequestScoped {

    public RemoveRequest {
        Objects.requireNonNull(requestId, "request_id");
        source = source == null ? MessageSource.CONDUCTOR : source;
    }

    /** A removal by the conductor, not tied to a TP batch. */
    public RemoveRequest(String requestId) {
        this(requestId, MessageSource.CONDUCTOR, -1);
    }
}
