package io.mstar.wire;

import java.util.Locale;

/**
 * How a request ended, as the conductor decided it: the {@code status} tag of the conductor's request metrics, and
 * the {@code outcome} the conductor puts on each {@link DrainRequest} (a project extension, docs/protocol.md) so a
 * worker can count a request's end by its cause rather than guess it.
 */
public enum RequestOutcome {
    COMPLETED,
    FAILED,
    ABORTED;

    /** The wire and API value: the name in lower case. Values never change. */
    @com.fasterxml.jackson.annotation.JsonValue
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The outcome with wire value {@code value}, or null when there is none. */
    public static RequestOutcome fromValue(String value) {
        for (RequestOutcome o : values()) {
            if (o.value().equals(value)) {
                return o;
            }
        }
        return null;
    }
}
