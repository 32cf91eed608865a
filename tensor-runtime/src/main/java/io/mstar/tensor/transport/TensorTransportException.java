package io.mstar.tensor.transport;

/**
 * A tensor read failed. {@link #reason()} says what the caller should do; {@link #retriable()} is the
 * short answer. The consumer reports the uuid as failed in {@code TensorReceived} either way.
 */
public class TensorTransportException extends RuntimeException {

    public enum Reason {
        /** 404: the producer never had this uuid. A wrong descriptor; retrying cannot help. */
        UNKNOWN_TENSOR(false),
        /** 410: the producer had it and freed it; a read after the acks. Retrying cannot help. */
        FREED(false),
        /** The range asked lies outside the tensor (416). A wrong descriptor. */
        BAD_RANGE(false),
        /** Fewer or more bytes than asked arrived. */
        TRUNCATED(true),
        /** Connection refused or reset, timeout, a 5xx. */
        IO(true);

        private final boolean retriable;

        Reason(boolean retriable) {
            this.retriable = retriable;
        }
    }

    private final Reason reason;
    private final long uuid;

    public TensorTransportException(Reason reason, long uuid, String message, Throwable cause) {
        super("tensor " + uuid + ": " + reason + ": " + message, cause);
        this.reason = reason;
        this.uuid = uuid;
    }

    public Reason reason() {
        return reason;
    }

    public long uuid() {
        return uuid;
    }

    public boolean retriable() {
        return reason.retriable;
    }

    static TensorTransportException forStatus(int status, long uuid, String source) {
        return switch (status) {
            case 404 -> new TensorUnknownException(uuid, source);
            case 410 -> new TensorFreedException(uuid, source);
            case 416 -> new TensorTransportException(Reason.BAD_RANGE, uuid, "HTTP 416 from " + source, null);
            default -> new TensorTransportException(Reason.IO, uuid, "HTTP " + status + " from " + source, null);
        };
    }
}
