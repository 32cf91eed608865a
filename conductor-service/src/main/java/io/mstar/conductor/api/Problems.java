package io.mstar.conductor.api;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import io.mstar.conductor.error.ErrorType;

/** Builds {@code application/problem+json} answers with the stable error type. */
public final class Problems {

    /** Seconds a client is told to wait after a 503 for a full queue or no ready worker. */
    static final String RETRY_AFTER_SECONDS = "1";

    private Problems() {
    }

    public static ProblemDetail detail(ErrorType type, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatusCode.valueOf(type.status()), detail);
        problem.setType(type.typeUri());
        problem.setTitle(type.title());
        problem.setProperty("error_type", type.value());
        return problem;
    }

    public static ResponseEntity<ProblemDetail> response(ErrorType type, String detail) {
        ResponseEntity.BodyBuilder builder = ResponseEntity.status(type.status()).contentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (type.status() == 503) {
            builder.header("Retry-After", RETRY_AFTER_SECONDS);
        }
        return builder.body(detail(type, detail));
    }
}
