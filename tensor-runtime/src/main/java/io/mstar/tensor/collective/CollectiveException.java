package io.mstar.tensor.collective;

/**
 * A {@link Collective} call could not complete. {@link #reason()} says what the caller does: INVALID_ARGUMENT is a bug
 * of the caller's (this call, or a peer that called something else); every other reason means the communicator is
 * unusable and the tensor-parallel group must be rebuilt (the step fails, the worker reports it).
 */
public class CollectiveException extends RuntimeException {

    public enum Reason {
        /** A peer did not arrive within the bound: it died, hangs, or is far behind. The communicator is aborted. */
        TIMEOUT,
        /** {@link Collective#abort()} was called, here or (shared memory) on a peer; or the caller was interrupted. */
        ABORTED,
        /** The communicator was closed. */
        CLOSED,
        /**
         * An offset or length outside the buffer, a buffer of the wrong device kind, a freed buffer, bad settings; or
         * ranks that disagree on the call (another operation or size), which also aborts the communicator.
         */
        INVALID_ARGUMENT,
        /** The shared-memory file could not be created, sized or mapped ({@code /dev/shm} full, permissions). */
        IO,
        /** NCCL reported an error (its own, CUDA's, a peer's); the communicator is aborted. */
        NCCL_ERROR
    }

    private final Reason reason;
    private final CollectiveOperation operation;
    private final int rank;
    private final int size;
    private final long sequence;

    /**
     * @param sequence the call's number on this communicator, from 1 (0: {@link CollectiveOperation#JOIN})
     */
    public CollectiveException(Reason reason, CollectiveOperation operation, int rank, int size, long sequence,
            String message, Throwable cause) {
        super("rank " + rank + " of " + size + ", " + operation + " #" + sequence + ": " + reason + ": " + message,
                cause);
        this.reason = reason;
        this.operation = operation;
        this.rank = rank;
        this.size = size;
        this.sequence = sequence;
    }

    public Reason reason() {
        return reason;
    }

    public CollectiveOperation operation() {
        return operation;
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    public long sequence() {
        return sequence;
    }
}
