package io.mstar.conductor.lifecycle;

/** What the conductor can learn about a configured worker. */
public enum WorkerEvent {
    /** A {@code SetupDone} from the incarnation already known, or the first one ever: set up, alive. */
    SETUP_DONE,
    /** A {@code SetupDone} from a new incarnation: the worker restarted and lost every request it held. */
    RESTARTED,
    /** Nothing heard within {@code mstar.conductor.worker-loss-timeout}. */
    TIMED_OUT
}
