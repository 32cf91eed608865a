package io.mstar.conductor.openai;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;

/**
 * OpenAI's error body, {@code {"error":{"message","type","param","code"}}}. The HTTP status is the conductor's
 * ({@link ErrorType#status()}); {@code type} is OpenAI's class of error for that status; {@code code} is the
 * conductor's stable {@code error_type}, except {@code unknown_model}, which OpenAI clients know as
 * {@code model_not_found}.
 */
public record OpenAiError(@JsonProperty("error") Body error) {

    /** {@code param} and {@code code} are always present, null when not known, as OpenAI sends them. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Body(@JsonProperty("message") String message, @JsonProperty("type") String type,
            @JsonProperty("param") String param, @JsonProperty("code") String code) {
    }

    public static OpenAiError of(ErrorType type, String message, String param) {
        return new OpenAiError(new Body(message, typeOf(type), param, codeOf(type)));
    }

    public static OpenAiError of(ConductorException e) {
        return of(e.type(), e.getMessage(), e instanceof OpenAiException o ? o.param() : null);
    }

    /** OpenAI's error {@code type} for a conductor error type. */
    static String typeOf(ErrorType type) {
        return switch (type) {
            case UNAUTHORIZED -> "authentication_error";
            case FORBIDDEN -> "permission_error";
            default -> type.status() < 500 ? "invalid_request_error" : "server_error";
        };
    }

    static String codeOf(ErrorType type) {
        return type == ErrorType.UNKNOWN_MODEL ? "model_not_found" : type.value();
    }

    /** The whole answer: the conductor's status, JSON body, and {@code Retry-After} on a 503 as /v1/requests. */
    public static ResponseEntity<OpenAiError> response(ConductorException e) {
        ResponseEntity.BodyBuilder builder = ResponseEntity.status(e.type().status()).contentType(MediaType.APPLICATION_JSON);
        if (e.type().status() == 503) {
            builder.header("Retry-After", "1");
        }
        return builder.body(of(e));
    }
}
