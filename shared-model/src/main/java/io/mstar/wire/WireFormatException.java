package io.mstar.wire;

/**
 * A control message that could not be decoded. The only exception {@link WireCodec}'s decoders
 * throw. Callers branch on {@link #reason()} (e.g. to dead-letter with a stable reason) and log
 * {@link #jsonPath()}; never on the message text.
 */
public final class WireFormatException extends RuntimeException {

    /** Why decoding failed. Stable: these names are dead-letter reasons. */
    public enum Reason {
        /** Not syntactically valid JSON (including empty input and duplicate object keys). */
        MALFORMED_JSON,
        /** A {@code message_type} this codec does not know. */
        UNKNOWN_MESSAGE_TYPE,
        /** A required field is absent or explicitly null. */
        MISSING_FIELD,
        /** A JSON value of the wrong kind: no coercion between strings, numbers and booleans. */
        WRONG_TYPE,
        /** Right JSON type, unacceptable value: out of range, unknown enum code, inconsistent. */
        INVALID_VALUE,
        /** Anything but whitespace after the document. */
        TRAILING_DATA,
        /** Nesting deeper than {@link WireCodec#MAX_NESTING_DEPTH}. */
        TOO_DEEP,
        /** Document, string or number larger than the codec's limits. */
        TOO_LARGE
    }

    private final String jsonPath;
    private final Reason reason;

    public WireFormatException(Reason reason, String jsonPath, String detail) {
        this(reason, jsonPath, detail, null);
    }

    public WireFormatException(Reason reason, String jsonPath, String detail, Throwable cause) {
        super(reason + " at " + jsonPath + ": " + detail, cause);
        this.reason = reason;
        this.jsonPath = jsonPath;
    }

    /** Where in the document, e.g. {@code $.body.inputs[0].tensor_info[1].uuid}. */
    public String jsonPath() {
        return jsonPath;
    }

    /** Why. */
    public Reason reason() {
        return reason;
    }
}
