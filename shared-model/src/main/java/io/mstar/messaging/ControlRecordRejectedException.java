package io.mstar.messaging;

/**
 * A control record the receiver will not act on: undecodable, from another deployment config, or missing
 * its headers. Thrown by the control-message deserializers; the listener container routes the record to the
 * dead-letter topic with {@link #reason()} in the {@code mstar-dlq-reason} header. Never retriable: the same
 * bytes fail the same way.
 */
public final class ControlRecordRejectedException extends RuntimeException {

    private final DeadLetterReason reason;

    public ControlRecordRejectedException(DeadLetterReason reason, String message) {
        this(reason, message, null);
    }

    public ControlRecordRejectedException(DeadLetterReason reason, String message, Throwable cause) {
        super(reason.value() + ": " + message, cause);
        this.reason = reason;
    }

    public DeadLetterReason reason() {
        return reason;
    }

    /**
     * The dead-letter reason for any failure: the reason of the first {@link ControlRecordRejectedException}
     * in the cause chain, else {@link DeadLetterReason#UNKNOWN}.
     */
    public static DeadLetterReason reasonOf(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ControlRecordRejectedException rejected) {
                return rejected.reason();
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return DeadLetterReason.UNKNOWN;
    }
}
