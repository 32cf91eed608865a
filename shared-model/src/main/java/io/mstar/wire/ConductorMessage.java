package io.mstar.wire;

import java.util.Objects;

/**
 * Envelope of a message to the conductor: {@code {"message_type": "...", "body": {...}}}.
 * The type and the body's class always agree; {@link #of(ConductorMessageBody)} derives one from
 * the other.
 */
public record ConductorMessage(ConductorMessageType messageType, ConductorMessageBody body) {

    public ConductorMessage {
        Objects.requireNonNull(messageType, "message_type");
        Objects.requireNonNull(body, "body");
        if (messageType.bodyType() != body.getClass()) {
            throw new IllegalArgumentException("message type " + messageType.value() + " cannot carry "
                    + body.getClass().getSimpleName());
        }
    }

    /** The message carrying {@code body}, typed by the body's class. */
    public static ConductorMessage of(ConductorMessageBody body) {
        Objects.requireNonNull(body, "body");
        return new ConductorMessage(ConductorMessageType.forBody(body.getClass()), body);
    }
}
