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
        /** 401: the producer refused the read grant (another deployment's secret, a clock far off). */
        UNAUTHORIZED(false),
        /**
         * TLS failed (docs/security.md#tls-on-the-data-port): a reader with TLS met a plain-text server or a
         * certificate it does not trust (another CA, a name that does not match, expired), or a reader without TLS met
         * a server that serves HTTPS only. A deployment whose processes disagree on TLS does not heal by retrying.
         */
        TLS(false),
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
            case 401 -> new TensorTransportException(Reason.UNAUTHORIZED, uuid, "HTTP 401 from " + source
                    + ": the read grant was refused", null);
            // A tensor server with TLS answers a plain-HTTP request with a redirect to https (TensorServer).
            case 308 -> new TensorTransportException(Reason.TLS, uuid, "HTTP " + status + " from "
                    + source + ": the server serves HTTPS only and this reader has TLS off; every process of a "
                    + "deployment must use the same mstar.data-plane.tls.enabled", null);
            default -> new TensorTransportException(Reason.IO, uuid, "HTTP " + status + " from " + source, null);
        };
    }
}
