package io.mstar.wire;

/**
 * Why a worker failed a request, stable across releases: the {@code error_types} of a {@link FailRequests} (a
 * project extension, docs/protocol.md) beside the error's text, so the conductor and operators branch on a code, never
 * on a message. Values never change; new ones are added, and a value this build does not know decodes as
 * {@link #UNKNOWN}.
 */
public enum WorkerErrorType {
    /** A message did not fit the request's graph (unknown node, several tensors on a node edge). */
    BAD_MESSAGE("bad_message"),
    /** The graph uses a feature this worker does not run. */
    UNSUPPORTED_GRAPH("unsupported_graph"),
    /** An input tensor could not be read from its producer, or stored here. */
    INPUT_READ_FAILED("input_read_failed"),
    /** An input has the wrong dtype, shape or content for its node. */
    INVALID_INPUT("invalid_input"),
    /** The model or node has no kernel on this worker. */
    NO_KERNEL("no_kernel"),
    /** A model's weights or tokenizer could not be loaded. */
    BAD_MODEL("bad_model"),
    /** A kernel failed for the request or its batch. */
    KERNEL_FAILED("kernel_failed"),
    /** The request's KV cache had no free page for its next step. */
    OUT_OF_PAGES("out_of_pages"),
    /** The request can never fit its node's KV cache: its prompt plus {@code max_tokens} outgrow the whole pool. */
    KV_CAPACITY_EXCEEDED("kv_capacity_exceeded"),
    /** The device refused an allocation or a copy for this request; the worker goes on. */
    DEVICE_ERROR("device_error"),
    /** A sticky device error: every request on the worker fails and its liveness goes down. */
    DEVICE_FATAL("device_fatal"),
    /** A stream buffer refused a chunk. */
    STREAM_FAILED("stream_failed"),
    /** The broker did not acknowledge one of the request's messages. */
    MESSAGE_NOT_DELIVERED("message_not_delivered"),
    /** The worker dropped the request because its conductor went away. */
    CONDUCTOR_LOST("conductor_lost"),
    /** Anything else: a bug on the worker. */
    INTERNAL("internal"),
    /** A value this build does not know (a newer worker), or none given (an older one). */
    UNKNOWN("unknown");

    private final String value;

    WorkerErrorType(String value) {
        this.value = value;
    }

    /** The wire value. */
    public String value() {
        return value;
    }

    /** The type with wire value {@code value}; {@link #UNKNOWN} for anything else. */
    public static WorkerErrorType fromValue(String value) {
        for (WorkerErrorType t : values()) {
            if (t.value.equals(value)) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
