package io.mstar.tensor.arena;

/**
 * An arena operation failed. {@link #reason()} says what the caller should do: {@code IO} is the host
 * (tmpfs full, permissions) and may pass; the others are caller bugs and never do.
 */
public class ArenaException extends RuntimeException {

    public enum Reason {
        /** Creating, sizing or mapping a file failed (e.g. {@code /dev/shm} full). */
        IO,
        /** The slot is not live here: a double free, or a slot of another arena. */
        NOT_LIVE,
        /** The uuid already has a live slot. */
        DUPLICATE_UUID,
        /** A size or offset out of range. */
        INVALID_ARGUMENT,
        /** The arena was closed. */
        CLOSED
    }

    private final Reason reason;

    public ArenaException(Reason reason, String message) {
        this(reason, message, null);
    }

    public ArenaException(Reason reason, String message, Throwable cause) {
        super(reason + ": " + message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
