package io.mstar.conductor.lifecycle;

/**
 * Where a request is in its life (docs/architecture.md#a-requests-life,
 * docs/architecture.md#teardown-abort-and-failure). The only way to move is {@link #next(RequestEvent)}, which rejects
 * an illegal move naming both ends; every (state, event) pair is pinned by a test.
 *
 * <pre>
 *   QUEUED  --ADMIT-->           RUNNING
 *   QUEUED  --ABORT/FAIL-->      REMOVED   (never reached a worker: nothing to drain)
 *   RUNNING --FINISH/ABORT/FAIL--> DRAINING
 *   DRAINING --DRAINED-->        REMOVED   (ReadsDone from all, or the drain timeout)
 *   DRAINING --ABORT/FAIL-->     DRAINING  (already ending: idempotent, the first outcome stays)
 *   REMOVED  --ABORT/FAIL-->     REMOVED   (late: ignored)
 * </pre>
 */
public enum RequestState {
    QUEUED,
    RUNNING,
    DRAINING,
    REMOVED;

    public RequestState next(RequestEvent event) {
        switch (this) {
            case QUEUED:
                if (event == RequestEvent.ADMIT) {
                    return RUNNING;
                }
                if (event == RequestEvent.ABORT || event == RequestEvent.FAIL) {
                    return REMOVED;
                }
                break;
            case RUNNING:
                if (event == RequestEvent.FINISH || event == RequestEvent.ABORT || event == RequestEvent.FAIL) {
                    return DRAINING;
                }
                break;
            case DRAINING:
                if (event == RequestEvent.DRAINED) {
                    return REMOVED;
                }
                if (event == RequestEvent.ABORT || event == RequestEvent.FAIL) {
                    return DRAINING;
                }
                break;
            case REMOVED:
                if (event == RequestEvent.ABORT || event == RequestEvent.FAIL) {
                    return REMOVED;
                }
                break;
            default:
                break;
        }
        throw new IllegalRequestTransitionException(this, event);
    }

    /** The wire form in API answers and the admin {@code state} filter. */
    @com.fasterxml.jackson.annotation.JsonValue
    public String value() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Whether the request has ended (an outcome is fixed); it may still be draining. */
    public boolean ended() {
        return this == DRAINING || this == REMOVED;
    }
}
