package io.mstar.conductor.lifecycle;

/**
 * The conductor's view of one configured worker. The only way to move is {@link #next(WorkerEvent)}, which
 * rejects an illegal move naming both ends; every (state, event) pair is pinned by a test.
 *
 * <pre>
 *   STARTING --SETUP_DONE--> READY --TIMED_OUT--> LOST
 *                            READY --SETUP_DONE/RESTARTED--> READY
 *                            LOST  --SETUP_DONE/RESTARTED--> READY
 * </pre>
 * A worker never heard from cannot time out or restart (there is nothing to lose or compare), and a lost
 * worker cannot be lost again.
 */
public enum WorkerLifecycle {
    /** Configured, never heard from since the conductor started. */
    STARTING,
    /** Set up and heard from within the loss timeout: requests may be placed on it. */
    READY,
    /** Silent past the loss timeout: its requests must fail; it may come back with a {@code SetupDone}. */
    LOST;

    public WorkerLifecycle next(WorkerEvent event) {
        switch (this) {
            case STARTING:
                if (event == WorkerEvent.SETUP_DONE) {
                    return READY;
                }
                break;
            case READY:
                return event == WorkerEvent.TIMED_OUT ? LOST : READY;
            case LOST:
                if (event == WorkerEvent.SETUP_DONE || event == WorkerEvent.RESTARTED) {
                    return READY;
                }
                break;
            default:
                break;
        }
        throw new IllegalWorkerTransitionException(this, event);
    }
}
