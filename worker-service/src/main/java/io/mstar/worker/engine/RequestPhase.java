package io.mstar.worker.engine;

/**
 * A request's life on a worker (docs/architecture.md#lifecycles-as-enums). Removal is not a phase: a removed request
 * leaves the engine and becomes a tombstone.
 */
enum RequestPhase {
    /** Running passes. */
    ACTIVE,
    /** Failed here ({@code FailRequests} sent): nothing more is scheduled; waits for the conductor's teardown. */
    FAILED,
    /** {@code DrainRequest} seen: schedules and reads nothing more, sends {@code ReadsDone} once its reads landed. */
    DRAINING;

    /** The phase after {@code event}; an illegal move names both. */
    RequestPhase on(Event event) {
        return switch (event) {
            case FAIL -> this == DRAINING ? DRAINING : FAILED;
            case DRAIN -> DRAINING;
        };
    }

    enum Event {
        FAIL, DRAIN
    }
}
