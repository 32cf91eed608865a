package io.mstar.stack;

/**
 * Something the local stack could not do: a process that did not start, did not become ready
 * in time, or could not be stopped. The message carries what an operator needs to act on it,
 * usually the tail of the process's log, because the process itself is often already gone.
 */
public class StackException extends RuntimeException {

    public StackException(String message) {
        super(message);
    }

    public StackException(String message, Throwable cause) {
        super(message, cause);
    }
}
