package io.mstar.wire;

import java.util.HashMap;
import java.util.Map;

/**
 * Types of the messages the conductor receives from workers (and from its own front end).
 * The {@link #value()} is what travels in {@code message_type}: names may change, values never.
 */
public enum ConductorMessageType {
    ABORT_REQUEST("abort_request", AbortRequest.class),
    FAIL_REQUESTS("fail_requests", FailRequests.class),
    NEW_REQUEST("new_request", NewRequestConductor.class),
    READS_DONE("reads_done", ReadsDone.class),
    RESULT_TENSORS("result_tensors", ResultTensors.class),
    SETUP_DONE("setup_done", SetupDone.class),
    WORKER_GRAPHS_DONE("worker_graphs_done", WorkerGraphsDone.class);

    private static final Map<String, ConductorMessageType> BY_VALUE = new HashMap<>();

    static {
        for (ConductorMessageType t : values()) {
            BY_VALUE.put(t.value, t);
        }
    }

    private final String value;
    private final Class<? extends ConductorMessageBody> bodyType;

    ConductorMessageType(String value, Class<? extends ConductorMessageBody> bodyType) {
        this.value = value;
        this.bodyType = bodyType;
    }

    /** The wire value. */
    public String value() {
        return value;
    }

    /** The one body class a message of this type carries. */
    public Class<? extends ConductorMessageBody> bodyType() {
        return bodyType;
    }

    /** The type whose wire value is {@code value}, or null when there is none. */
    public static ConductorMessageType fromValue(String value) {
        return BY_VALUE.get(value);
    }

    /** The type whose body class is exactly {@code bodyType}. */
    public static ConductorMessageType forBody(Class<?> bodyType) {
        for (ConductorMessageType t : values()) {
            if (t.bodyType == bodyType) {
                return t;
            }
        }
        throw new IllegalArgumentException("no conductor message type carries " + bodyType.getName());
    }
}
