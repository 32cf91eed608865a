package io.mstar.tensor.device;

/**
 * A device operation failed. {@link #reason()} tells the caller what to do: a per-request failure fails the
 * requests in the batch that hit it; a fatal one (a sticky CUDA context error) means nothing more can run on
 * this device, so the worker fails everything and turns its liveness down.
 */
public class DeviceException extends RuntimeException {

    public enum Reason {
        /** Not enough memory for this allocation; other requests may still fit. Per request. */
        OUT_OF_MEMORY(false),
        /** A bad argument (size, offset, a buffer of another device, a double free). Per request. */
        INVALID_ARGUMENT(false),
        /** A kernel or copy failed without poisoning the context. Per request. */
        LAUNCH_FAILED(false),
        /** The context is unusable (illegal address, ECC error, device lost). Fatal. */
        FATAL(true);

        private final boolean fatal;

        Reason(boolean fatal) {
            this.fatal = fatal;
        }

        public boolean isFatal() {
            return fatal;
        }
    }

    private final Reason reason;
    private final String device;

    public DeviceException(Reason reason, String device, String message) {
        this(reason, device, message, null);
    }

    public DeviceException(Reason reason, String device, String message, Throwable cause) {
        super(device + ": " + reason + ": " + message, cause);
        this.reason = reason;
        this.device = device;
    }

    public Reason reason() {
        return reason;
    }

    public String device() {
        return device;
    }

    public boolean isFatal() {
        return reason.isFatal();
    }
}
