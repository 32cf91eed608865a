package io.mstar.wire;

/** Progress of a unit of work (a node, a walk). Travels as its {@link #value()}. */
public enum Status {
    WAITING("waiting"),
    READY("ready"),
    IN_PROGRESS("in_progress"),
    DONE("done");

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
        for (Status s : values()) {
            if (s.value.equals(value)) {
                return s;
            }
        }
        return null;
    }
}
