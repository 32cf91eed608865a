package io.mstar.conductor.openai;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;

/**
 * A refused or failed OpenAI-route call: the conductor's {@link ErrorType} plus the request field at fault, which
 * OpenAI's error shape carries as {@code param}.
 */
public class OpenAiException extends ConductorException {

    private final String param;

    public OpenAiException(ErrorType type, String param, String detail) {
        super(type, detail);
        this.param = param;
    }

    /** The offending request field ({@code messages[1].role}, {@code input}), or null. */
    public String param() {
        return param;
    }

    static OpenAiException invalid(String param, String detail) {
        return new OpenAiException(ErrorType.INVALID_INPUT, param, detail);
    }
}
