package io.mstar.tensor.transport;

/** The producer freed the tensor before this read (HTTP 410). Not retriable. */
public class TensorFreedException extends TensorTransportException {

    public TensorFreedException(long uuid, String source) {
        super(Reason.FREED, uuid, "freed at " + source, null);
    }
}
