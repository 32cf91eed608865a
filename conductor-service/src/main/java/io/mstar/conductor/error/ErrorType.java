package io.mstar.conductor.error;

import java.net.URI;

/**
 * The stable error types of the conductor's API ({@code application/problem+json} {@code type}, the
 * {@code error_type} metric tag, the {@code error.type} of a terminal error chunk). Values never change; new
 * ones are added.
 */
public enum ErrorType {
    MALFORMED_REQUEST("malformed_request", 400, "Malformed request"),
    INVALID_INPUT("invalid_input", 400, "Invalid input"),
    PAYLOAD_TOO_LARGE("payload_too_large", 413, "Payload too large"),
    /** The request's prompt plus max_tokens can never fit its model's KV cache on the worker (a worker says so). */
    KV_CAPACITY_EXCEEDED("kv_capacity_exceeded", 413, "Request exceeds the KV cache"),
    UNKNOWN_MODEL("unknown_model", 404, "Unknown model"),
    REQUEST_NOT_FOUND("request_not_found", 404, "Request not found"),
    DUPLICATE_REQUEST_ID("duplicate_request_id", 409, "Duplicate request id"),
    QUEUE_FULL("queue_full", 503, "Queue full"),
    NO_READY_WORKERS("no_ready_workers", 503, "No ready workers"),
    SHUTTING_DOWN("shutting_down", 503, "Shutting down"),
    WORKER_LOST("worker_lost", 502, "Worker lost"),
    WORKER_FAILED("worker_failed", 502, "Worker failed the request"),
    OUTPUT_READ_FAILED("output_read_failed", 502, "Output read failed"),
    MESSAGE_NOT_DELIVERED("message_not_delivered", 503, "Control message not delivered"),
    MODEL_ERROR("model_error", 500, "Model error"),
    REQUEST_ABORTED("request_aborted", 409, "Request aborted"),
    DEADLINE_EXCEEDED("deadline_exceeded", 504, "Deadline exceeded"),
    UNAUTHORIZED("unauthorized", 401, "Unauthorized"),
    FORBIDDEN("forbidden", 403, "Forbidden"),
    ADMIN_DISABLED("admin_disabled", 503, "Admin API disabled"),
    INTERNAL("internal", 500, "Internal error");

    /** Prefix of the problem {@code type} URI; the value follows it. */
    public static final String TYPE_BASE = "https://mstar.io/problems/";

    private final String value;
    private final int status;
    private final String title;

    ErrorType(String value, int status, String title) {
        this.value = value;
        this.status = status;
        this.title = title;
    }

    public String value() {
        return value;
    }

    /** The HTTP status a plain (non-streaming) answer carries. */
    public int status() {
        return status;
    }

    public String title() {
        return title;
    }

    public URI typeUri() {
        return URI.create(TYPE_BASE + value);
    }
}
