package io.mstar.worker.kv;

/**
 * A KV-cache operation failed. {@link #reason()} says what the caller should do: {@link Reason#OUT_OF_PAGES}
 * and {@link Reason#INVALID_LOGITS} fail only the request named by {@link #requestId()} while every other
 * request continues; the rest are bugs of the caller and fail the request they concern.
 */
public class KvCacheException extends RuntimeException {

    public enum Reason {
        /** The page pool cannot hold this request's next tokens; nothing was allocated. Fails this request only. */
        OUT_OF_PAGES,
        /** The request was never added, or already released. */
        UNKNOWN_REQUEST,
        /** The request was added twice. */
        DUPLICATE_REQUEST,
        /** A page freed that is not allocated (a double free) or outside the pool. */
        PAGE_NOT_ALLOCATED,
        /** A token position the request has not reserved. */
        POSITION_OUT_OF_RANGE,
        /** Logits with NaN or +infinity, or nothing sampleable. Fails this request only. */
        INVALID_LOGITS,
        /** A bad argument: a negative count, a sampling setting outside its range. */
        INVALID_ARGUMENT,
        /** The cache was closed. */
        CLOSED
    }

    private final Reason reason;
    private final String requestId;

    public KvCacheException(Reason reason, String requestId, String message) {
        super(reason + (requestId == null ? "" : " [" + requestId + "]") + ": " + message);
        this.reason = reason;
        this.requestId = requestId;
    }

    public Reason reason() {
        return reason;
    }

    /** The request concerned, or null when none is. */
    public String requestId() {
        return requestId;
    }
}
