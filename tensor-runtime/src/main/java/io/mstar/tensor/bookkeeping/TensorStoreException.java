package io.mstar.tensor.bookkeeping;

/**
 * A tensor bookkeeping or store operation was refused. {@link #reason()} says what went wrong; {@link #uuid()}
 * names the tensor when there is one.
 *
 * <p>Unchecked on purpose: every reason here is a bookkeeping bug in the caller (a double free, an ack for a
 * tensor never stored, a uuid minted twice), not a condition it can retry. A checked result would be ignored at
 * exactly the call sites that have the bug, which is how the reference system's older store lost a double free.
 * The backend that raises it also counts it ({@link TensorBookkeeping#errors()}), so a metrics facade sees every
 * one even where a caller catches and carries on; logging with request context is the catcher's job.
 *
 * <p>Every batch operation is validated before it changes anything, so a refused batch leaves the bookkeeper as
 * it was.
 */
public class TensorStoreException extends RuntimeException {

    /** Stable: metrics tag values are these names. */
    public enum Reason {
        /** The uuid has no record: never stored, or already forgotten (freed). */
        UNKNOWN_UUID,
        /**
         * A put for a uuid that already has a record; uuids are minted once (docs/architecture.md#entities-and-ids).
         */
        DUPLICATE_UUID,
        /** A record marked forgotten while the bookkeeper still holds it: the removal would leave it behind. */
        RECORD_STILL_LIVE,
        /** A malformed call: parallel arrays of different lengths, an unregistered segment, a bad column. */
        INVALID_ARGUMENT
    }

    /** {@link #uuid()} when the error is not about one tensor. */
    public static final long NO_UUID = Long.MIN_VALUE;

    private final Reason reason;
    private final long uuid;
    private final String operation;

    public TensorStoreException(Reason reason, long uuid, String operation, String message) {
        super(operation + ": " + reason + (uuid == NO_UUID ? "" : " uuid=" + uuid) + (message.isEmpty() ? "" : ": " + message));
        this.reason = reason;
        this.uuid = uuid;
        this.operation = operation;
    }

    public Reason reason() {
        return reason;
    }

    /** The tensor concerned, or {@link #NO_UUID}. */
    public long uuid() {
        return uuid;
    }

    /** The bookkeeping method that refused, e.g. {@code dereference}. */
    public String operation() {
        return operation;
    }
}
