package io.mstar.worker.streaming;

/**
 * A stream buffer was used against its contract. Every reason is a bug of the caller or of a peer (a producer
 * that reuses a uuid, a signal after the stream ended), so the request it belongs to fails; other requests'
 * buffers are unaffected.
 */
public class StreamBufferException extends RuntimeException {

    public enum Reason {
        /** A uuid registered twice on one stream. */
        DUPLICATE_REGISTRATION,
        /** A landing for a uuid never registered on this stream. */
        UNKNOWN_UUID,
        /** A second landing for the same uuid. */
        DUPLICATE_LANDING,
        /** A registration after the final chunk was cut: the consumer has already finished. */
        REGISTERED_AFTER_FINAL,
        /** A call after {@link StreamBuffer#close()}. */
        CLOSED,
        /** The chunk policy answered outside its contract (fewer than one new token, negative context). */
        POLICY_VIOLATION
    }

    private final Reason reason;
    private final long uuid;

    public StreamBufferException(Reason reason, long uuid, String message) {
        super(reason + ": " + message);
        this.reason = reason;
        this.uuid = uuid;
    }

    public Reason reason() {
        return reason;
    }

    /** The uuid concerned, or 0 when none is. */
    public long uuid() {
        return uuid;
    }
}
