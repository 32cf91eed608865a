package io.mstar.worker.engine;

/**
 * A request's life on a worker (docs/architecture.md#lifecycles-as-enums, docs/worker-runtime.md#request-lifecycle):
 * one transition method, {@link #on}, whose table rejects every move it does not list. A removal that lands while the
 * request is in a step on the device waits in {@link #REMOVING} until no step holds it; a removed request leaves the
 * engine and becomes a tombstone.
 */
enum RequestPhase {
    /** Running passes. */
    ACTIVE,
    /** Failed here ({@code FailRequests} sent): nothing more is scheduled; waits for the conductor's teardown. */
    FAILED,
    /** {@code DrainRequest} seen: schedules and reads nothing more, sends {@code ReadsDone} once its reads landed. */
    DRAINING,
    /** Removed while a running or speculated step holds it: leaves once that step completed. */
    REMOVING,
    /** Gone: its tensors, pages and stream buffers were freed once. */
    REMOVED;

    /** What happens to a request. */
    enum Event {
        /** It failed here (a kernel, a read, a send): only a running request fails; the first cause stays. */
        FAIL,
        /** The conductor drains it: a second drain (a redelivered message) changes nothing. */
        DRAIN,
        /** Removal asked while a step holds it. */
        REMOVE_DEFERRED,
        /** It leaves now. */
        REMOVE
    }

    /** The phase after {@code event}; an illegal move throws, naming both. */
    RequestPhase on(Event event) {
        RequestPhase next = switch (this) {
            case ACTIVE -> switch (event) {
                case FAIL -> FAILED;
                case DRAIN -> DRAINING;
                case REMOVE_DEFERRED -> REMOVING;
                case REMOVE -> REMOVED;
            };
            case FAILED, DRAINING -> switch (event) {
                case FAIL -> null;
                case DRAIN -> DRAINING;
                case REMOVE_DEFERRED -> REMOVING;
                case REMOVE -> REMOVED;
            };
            case REMOVING -> switch (event) {
                case FAIL -> null;
                case DRAIN, REMOVE_DEFERRED -> REMOVING; // the removal already waits; a drain has nothing to add
                case REMOVE -> REMOVED;
            };
            case REMOVED -> null;
        };
        if (next == null) {
            throw new IllegalStateException("a worker request cannot " + event + " when " + this);
        }
        return next;
    }
}
