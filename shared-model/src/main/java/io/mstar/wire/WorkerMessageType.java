package io.mstar.wire;

import java.util.HashMap;
import java.util.Map;

/**
 * Types of the messages a worker receives, from the conductor or from a peer worker.
 * The {@link #value()} is what travels in {@code message_type}: names may change, values never.
 */
public enum WorkerMessageType {
    COLLECTIVE_BOOTSTRAP("collective_bootstrap", CollectiveBootstrap.class),
    CONDUCTOR_HEARTBEAT("conductor_heartbeat", ConductorHeartbeat.class),
    DRAIN_REQUEST("drain_request", DrainRequest.class),
    INPUT_SIGNALS("input_signals", InputSignals.class),
    NEW_REQUEST("new_request", NewRequest.class),
    REMOVE_REQUEST("remove_request", RemoveRequest.class),
    SCHEDULE_TP("schedule_tp", ScheduleTPNode.class),
    STOP_LOOPS("stop_loops", StopLoops.class),
    TENSOR_RECEIVED("tensor_received", TensorReceived.class),
    TP_NO_SPEC("tp_no_spec", TPNoSpeculation.class),
    UNPERSIST_TENSORS("unpersist", UnpersistTensors.class);

    private static final Map<String, WorkerMessageType> BY_VALUE = new HashMap<>();

    static {
        for (WorkerMessageType t : values()) {
            BY_VALUE.put(t.value, t);
        }
    }

    private final String value;
    private final Class<? extends WorkerMessageBody> bodyType;

    WorkerMessageType(String value, Class<? extends WorkerMessageBody> bodyType) {
        this.value = value;
        this.bodyType = bodyType;
    }

    /** The wire value. */
    public String value() {
        return value;
    }

    /** The one body class a message of this type carries. */
    public Class<? extends WorkerMessageBody> bodyType() {
        return bodyType;
    }

    /** The type whose wire value is {@code value}, or null when there is none. */
    public static WorkerMessageType fromValue(String value) {
        return BY_VALUE.get(value);
    }

    /** The type whose body class is exactly {@code bodyType}. */
    public static WorkerMessageType forBody(Class<?> bodyType) {
        for (WorkerMessageType t : values()) {
            if (t.bodyType == bodyType) {
                return t;
            }
        }
        throw new IllegalArgumentException("no worker message type carries " + bodyType.getName());
    }
}
