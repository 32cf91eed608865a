package io.mstar.worker.engine;

/** Something the engine cannot do for a request, typed by why; the request fails with it, the worker goes on. */
public class EngineException extends RuntimeException {

    public enum Reason {
        /** The graph uses a feature this engine does not run (nested loops, remote loop-backs). */
        UNSUPPORTED_GRAPH,
        /** A message does not fit the request's graph (unknown node, several tensors on a node edge). */
        BAD_MESSAGE,
        /** An input tensor could not be read from its producer. */
        READ_FAILED,
        /** A kernel failed for the request (or for its whole batch). */
        KERNEL_FAILED
    }

    private final Reason reason;

    public EngineException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
