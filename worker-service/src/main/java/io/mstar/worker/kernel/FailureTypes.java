package io.mstar.worker.kernel;

import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kv.KvCacheException;

/**
 * The stable {@link WorkerErrorType} of a failure a kernel can meet, so the type that travels in
 * {@code FailRequests} comes from the exception's class and reason, never from its message.
 */
public final class FailureTypes {

    private FailureTypes() {
    }

    /** The type of {@code e}, or {@code otherwise} when it is none of the kernels' own failures. */
    public static WorkerErrorType of(Throwable e, WorkerErrorType otherwise) {
        if (e instanceof KernelException k) {
            return switch (k.reason()) {
                case NO_KERNEL -> WorkerErrorType.NO_KERNEL;
                case BAD_INPUT -> WorkerErrorType.INVALID_INPUT;
                case BAD_MODEL -> WorkerErrorType.BAD_MODEL;
                case RUN_FAILED -> WorkerErrorType.KERNEL_FAILED;
            };
        }
        if (e instanceof KvCacheException kv) {
            return switch (kv.reason()) {
                case OUT_OF_PAGES -> WorkerErrorType.OUT_OF_PAGES;
                case INVALID_LOGITS -> WorkerErrorType.KERNEL_FAILED;
                default -> WorkerErrorType.INTERNAL;
            };
        }
        if (e instanceof DeviceException d) {
            return d.isFatal() ? WorkerErrorType.DEVICE_FATAL : WorkerErrorType.DEVICE_ERROR;
        }
        if (e instanceof NumberFormatException) {
            return WorkerErrorType.INVALID_INPUT; // a model kwarg or input that is not the number it must be
        }
        return otherwise;
    }
}
