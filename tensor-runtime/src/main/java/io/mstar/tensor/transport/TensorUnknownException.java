package io.mstar.tensor.transport;

/** The producer never had the tensor (HTTP 404). Not retriable. */
public class TensorUnknownException extends TensorTransportException {

    public TensorUnknownException(long uuid, String source) {
        super(Reason.UNKNOWN_TENSOR, uuid, "unknown at " + source, null);
    }
}
