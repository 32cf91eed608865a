package io.mstar.conductor.lifecycle;

import io.mstar.conductor.error.ErrorType;

/** Why a request was aborted; the {@code reason} tag of the cancellation metric. Values are stable. */
public enum AbortReason {
    ADMIN("admin", ErrorType.REQUEST_ABORTED),
    CLIENT_CANCEL("client_cancel", ErrorType.REQUEST_ABORTED),
    CLIENT_DISCONNECT("client_disconnect", ErrorType.REQUEST_ABORTED),
    DEADLINE("deadline", ErrorType.DEADLINE_EXCEEDED),
    /** An {@code AbortRequest} message on the conductor topic (another component asked). */
    MESSAGE("message", ErrorType.REQUEST_ABORTED),
    SHUTDOWN("shutdown", ErrorType.SHUTTING_DOWN);

    private final String value;
    private final ErrorType errorType;

    AbortReason(String value, ErrorType errorType) {
        this.value = value;
        this.errorType = errorType;
    }

    public String value() {
        return value;
    }

    /** The error a non-streaming client gets for a request aborted for this reason. */
    public ErrorType errorType() {
        return errorType;
    }
}
