package io.mstar.conductor.lifecycle;

/** How a request ended; the {@code status} tag of the request metrics. */
public enum Outcome {
    COMPLETED,
    FAILED,
    ABORTED;

    @com.fasterxml.jackson.annotation.JsonValue
    public String value() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
