package io.mstar.worker.engine;

import java.util.Locale;

import io.mstar.wire.RequestOutcome;

/**
 * Why a request left this worker: the {@code cause} of {@code mstar_worker_requests_ended_total}. The first cause a
 * request gets stays; a normal completion is its own cause, never a cancellation.
 */
enum RequestEnd {
    /** The conductor finished the request (its drain said {@code completed}). */
    COMPLETED,
    /** It failed here, or elsewhere and the conductor tore it down. */
    FAILED,
    /** The conductor aborted it (client, admin API, deadline), or removed it without a drain. */
    ABORTED,
    /** Dropped here because the conductor that drove it went away. */
    CONDUCTOR_LOST;

    /** The tag value. */
    String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The cause a drain with {@code outcome} gives; null when the conductor did not say. */
    static RequestEnd of(RequestOutcome outcome) {
        if (outcome == null) {
            return null;
        }
        return switch (outcome) {
            case COMPLETED -> COMPLETED;
            case FAILED -> FAILED;
            case ABORTED -> ABORTED;
        };
    }
}
