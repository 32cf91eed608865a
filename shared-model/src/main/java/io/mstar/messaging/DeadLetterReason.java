package io.mstar.messaging;

/**
 * Why a receiver refused a control record. Crosses a boundary twice (the {@code mstar-dlq-reason} header and
 * the {@code reason} tag of the dead-letter counter), so the {@link #value()}s are stable: names may change,
 * values never. The decode reasons mirror {@code WireFormatException.Reason} one to one; anything not
 * classified becomes an explicit, counted {@link #UNKNOWN}.
 */
public enum DeadLetterReason {

    MALFORMED_JSON("malformed_json"),
    UNKNOWN_MESSAGE_TYPE("unknown_message_type"),
    MISSING_FIELD("missing_field"),
    WRONG_TYPE("wrong_type"),
    INVALID_VALUE("invalid_value"),
    TRAILING_DATA("trailing_data"),
    TOO_DEEP("too_deep"),
    TOO_LARGE("too_large"),
    /** The {@code mstar-config} header names another deployment config than the receiver's. */
    CONFIG_MISMATCH("config_mismatch"),
    /** One of the required {@code mstar-*} headers is absent. */
    MISSING_HEADER("missing_header"),
    /** A required header is present but unreadable (not an entity id, not a number). */
    INVALID_HEADER("invalid_header"),
    /** Anything else: a bug or a failure outside decoding; the exception headers of the record say more. */
    UNKNOWN("unknown");

    private final String value;

    DeadLetterReason(String value) {
        this.value = value;
    }

    /** The stable wire and metric value. */
    public String value() {
        return value;
    }

    /** The reason for a stable value; an unknown value maps to {@link #UNKNOWN}, never an exception. */
    public static DeadLetterReason fromValue(String value) {
        for (DeadLetterReason reason : values()) {
            if (reason.value.equals(value)) {
                return reason;
            }
        }
        return UNKNOWN;
    }
}
