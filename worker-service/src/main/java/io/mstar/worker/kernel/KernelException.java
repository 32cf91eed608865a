package io.mstar.worker.kernel;

/** A kernel that cannot run, typed by what went wrong rather than by its message. */
public class KernelException extends RuntimeException {

    public enum Reason {
        /** The model or node has no kernel on this worker. */
        NO_KERNEL,
        /** An input has the wrong dtype or shape. */
        BAD_INPUT,
        /** A model's weights or tokenizer could not be loaded (minilm-embed). */
        BAD_MODEL,
        /** The runtime a kernel delegates to (ONNX Runtime) failed on inputs the kernel had accepted. */
        RUN_FAILED
    }

    private final Reason reason;

    public KernelException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public KernelException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
