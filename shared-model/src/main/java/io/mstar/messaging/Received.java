package io.mstar.messaging;

/**
 * A decoded control message with what its headers said about the sender, as a listener hands it to the
 * owner loop. Immutable; safe to pass between threads.
 *
 * @param <M> {@code WorkerMessage} or {@code ConductorMessage}
 */
public record Received<M>(M message, ControlHeaders.Stamp stamp) {
}
