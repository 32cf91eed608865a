package io.mstar.conductor.api;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;

/** Every error of the public and admin controllers as {@code application/problem+json} with a stable type. */
@RestControllerAdvice
class ProblemAdvice {

    private static final Logger log = LoggerFactory.getLogger(ProblemAdvice.class);

    @ExceptionHandler(ConductorException.class)
    ResponseEntity<ProblemDetail> conductor(ConductorException e) {
        return Problems.response(e.type(), e.getMessage());
    }

    @ExceptionHandler(ServerWebInputException.class)
    ResponseEntity<ProblemDetail> input(ServerWebInputException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DataBufferLimitException) {
                return Problems.response(ErrorType.PAYLOAD_TOO_LARGE, "request body too large: " + t.getMessage());
            }
        }
        return Problems.response(ErrorType.MALFORMED_REQUEST, e.getReason() == null ? "malformed request" : e.getReason());
    }

    @ExceptionHandler(DataBufferLimitException.class)
    ResponseEntity<ProblemDetail> tooLarge(DataBufferLimitException e) {
        return Problems.response(ErrorType.PAYLOAD_TOO_LARGE, "request body too large: " + e.getMessage());
    }

    @ExceptionHandler(UnsupportedMediaTypeStatusException.class)
    ResponseEntity<ProblemDetail> mediaType(UnsupportedMediaTypeStatusException e) {
        return Problems.response(ErrorType.MALFORMED_REQUEST, "the body must be application/json");
    }

    @ExceptionHandler(IllegalStateException.class)
    ResponseEntity<ProblemDetail> internal(IllegalStateException e) {
        log.error("internal error answering a request", e);
        return Problems.response(ErrorType.INTERNAL, "internal error");
    }
}
