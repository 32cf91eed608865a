package io.mstar.wire;

import java.util.HashMap;
import java.util.Map;

/** Progress of a unit of work (a node, a walk). Travels as its {@link #value()}. */
public enum Status {
    WAITING("waiting"),
    READY("ready"),
    IN_PROGRESS("in_progress"),
    DONE("done");

    private static final Map<String, Status> BY_VALUE = new HashMap<>();

    static {
        for (Status t : values()) {
            BY_VALUE.put(t.value, t);
        }
    }

    private final String value;

    Status(String value) {
        this.value = value;
    }

    /** The wire value. */
    public String value() {
        return value;
    }

    /** The status whose wire value is {@code value}, or null when there is none. */
    public static Status fromValue(String value) {
        return BY_VALUE.get(value);
    }
}
