package io.mstar.worker.kernel.minilm;

import io.mstar.worker.kernel.KernelException;

/** The minilm-embed model could not be loaded or run: a bad weights file, a tokenizer that will not start. */
public final class MiniLmException extends KernelException {

    public MiniLmException(String message) {
        super(Reason.BAD_MODEL, message);
    }

    public MiniLmException(String message, Throwable cause) {
        super(Reason.BAD_MODEL, message, cause);
    }
}
