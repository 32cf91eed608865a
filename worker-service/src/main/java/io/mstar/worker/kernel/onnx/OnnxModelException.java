package io.mstar.worker.kernel.onnx;

import io.mstar.worker.kernel.KernelException;

/**
 * An ONNX model that cannot serve its node: the file does not load, or its graph lacks an input or output the node
 * maps, or takes another element type. Raised when the kernel is built, never per request.
 */
public final class OnnxModelException extends KernelException {

    public OnnxModelException(String message) {
        super(Reason.BAD_MODEL, message);
    }

    public OnnxModelException(String message, Throwable cause) {
        super(Reason.BAD_MODEL, message, cause);
    }
}
