package io.mstar.conductor.error;

import java.util.Objects;

/**
 * The conductor's one base exception: an {@link ErrorType} saying what the caller should do, and a detail for
 * people. Code branches on {@link #type()}, never on the message.
 */
public class ConductorException extends RuntimeException {

    private final ErrorType type;

    public ConductorException(ErrorType type, String detail) {
        super(detail);
        this.type = Objects.requireNonNull(type, "type");
    }

    public ConductorException(ErrorType type, String detail, Throwable cause) {
        super(detail, cause);
        this.type = Objects.requireNonNull(type, "type");
    }

    public ErrorType type() {
        return type;
    }
}
