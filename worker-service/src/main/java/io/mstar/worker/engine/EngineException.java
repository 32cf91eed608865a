package io.mstar.worker.engine;

import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.FailureTypes;
import io.mstar.worker.streaming.StreamBufferException;

/**
 * Something the engine cannot do, typed by why: for a request (the request fails with it, the worker goes on), or
 * at start-up ({@link Reason#DEVICE_UNAVAILABLE}: the worker does not start).
 */
public class EngineException extends RuntimeException {

    public enum Reason {
        /** The graph uses a feature this engine does not run (nested loops, remote loop-backs). */
        UNSUPPORTED_GRAPH,
        /** A message does not fit the request's graph (unknown node, several tensors on a node edge). */
        BAD_MESSAGE,
        /** An input tensor could not be read from its producer. */
        READ_FAILED,
        /** A kernel failed for the request (or for its whole batch). */
        KERNEL_FAILED,
        /** Start-up: the configured device ({@code mstar.worker.device=cuda}) is not there. */
        DEVICE_UNAVAILABLE
    }

    private final Reason reason;

    public EngineException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    /** The stable type of this failure on the wire. */
    public WorkerErrorType errorType() {
        return switch (reason) {
            case UNSUPPORTED_GRAPH -> WorkerErrorType.UNSUPPORTED_GRAPH;
            case BAD_MESSAGE -> WorkerErrorType.BAD_MESSAGE;
            case READ_FAILED -> WorkerErrorType.INPUT_READ_FAILED;
            case KERNEL_FAILED -> WorkerErrorType.KERNEL_FAILED;
            case DEVICE_UNAVAILABLE -> WorkerErrorType.DEVICE_ERROR;
        };
    }

    /**
     * The stable type of any failure the engine meets: its own and the stream buffers' by reason, the kernels' by
     * {@link FailureTypes}, anything else {@link WorkerErrorType#INTERNAL} (a bug).
     */
    static WorkerErrorType typeOf(Throwable e) {
        if (e instanceof EngineException x) {
            return x.errorType();
        }
        if (e instanceof StreamBufferException) {
            return WorkerErrorType.STREAM_FAILED;
        }
        return FailureTypes.of(e, WorkerErrorType.INTERNAL);
    }
}
