package io.mstar.wire;

import java.util.Objects;

/**
 * Envelope of a message to a worker: {@code {"message_type": "...", "body": {...}}}.
 * The type and the body's class always agree; {@link #of(WorkerMessageBody)} derives one from
 * the other.
 */
public record WorkerMessage(WorkerMessageType messageType, WorkerMessageBody body) {

    public WorkerMessage {
        Objects.requireNonNull(messageType, "message_type");
        Objects.requireNonNull(body, "body");
        if (messageType.bodyType() != body.getClass()) {
            throw new IllegalArgumentException("message type " + messageType.value() + " cannot carry "
                    + body.getClass().getSimpleName());
        }
    }

    /** The message carrying {@code body}, typed by the body's class. */
    public static WorkerMessage of(WorkerMessageBody body) {
        Objects.requireNonNull(body, "body");
        return new WorkerMessage(WorkerMessageType.forBody(body.getClass()), body);
    }
}
