package io.mstar.conductor.lifecycle;

/** A request lifecycle move the state machine forbids: a bug in the caller, never a network condition. */
public final class IllegalRequestTransitionException extends IllegalStateException {

    private final RequestState from;
    private final RequestEvent event;

    public IllegalRequestTransitionException(RequestState from, RequestEvent event) {
        super("illegal request transition: " + event + " in state " + from);
        this.from = from;
        this.event = event;
    }

    public RequestState from() {
        return from;
    }

    public RequestEvent event() {
        return event;
    }
}
