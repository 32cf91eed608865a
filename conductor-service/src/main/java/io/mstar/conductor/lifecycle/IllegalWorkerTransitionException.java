package io.mstar.conductor.lifecycle;

/** A worker lifecycle move the state machine forbids: a bug in the caller, never a network condition. */
public final class IllegalWorkerTransitionException extends IllegalStateException {

    private final WorkerLifecycle from;
    private final WorkerEvent event;

    public IllegalWorkerTransitionException(WorkerLifecycle from, WorkerEvent event) {
        super("illegal worker transition: " + event + " in state " + from);
        this.from = from;
        this.event = event;
    }

    public WorkerLifecycle from() {
        return from;
    }

    public WorkerEvent event() {
        return event;
    }
}
