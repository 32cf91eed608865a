package io.mstar.tensor.device;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Memory a worker keeps tensors in: a GPU ({@code CudaDevice}) or host memory ({@code HostDevice}, the
 * default when no GPU is found). Node kernels and the tensor store see only this interface, so the same
 * model runs on either.
 *
 * <p>Owned by the engine loop: a device is not thread-safe unless an implementation says so. Copies are
 * synchronous from the caller's point of view (the bytes are in place when the call returns); an
 * implementation may overlap work internally (streams, pinned staging) as long as that holds.
 */
public interface Device extends AutoCloseable {

    /** Stable label for metrics and logs: {@code host}, {@code cuda:0}. */
    String name();

    DeviceKind kind();

    /**
     * A buffer of at least {@code nbytes}. A {@link DeviceException} with reason
     * {@link DeviceException.Reason#OUT_OF_MEMORY} fails only the request that asked; a fatal one fails the
     * worker.
     */
    DeviceBuffer allocate(long nbytes);

    /** Returns the buffer to the device; a buffer is freed exactly once, a second free is an error. */
    void free(DeviceBuffer buffer);

    /**
     * Copies {@code dst.remaining()} bytes from {@code src} at {@code srcOffset} into {@code dst}, starting at
     * its position; {@code dst}'s position and limit are left as they were. A read-only {@code dst} is an
     * INVALID_ARGUMENT.
     */
    void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst);

    /**
     * Copies {@code src.remaining()} bytes from {@code src}, starting at its position, into {@code dst} at
     * {@code dstOffset}; {@code src}'s position and limit are left as they were.
     */
    void copyFromHost(ByteBuffer src, DeviceBuffer dst, long dstOffset);

    /**
     * Each transfer's device range into its host buffer, as {@link #copyToHost(DeviceBuffer, long, ByteBuffer)} one
     * by one would; a device with a round trip per copy (CUDA) issues them all and waits once, which is what a step
     * of many small per-request tensors needs.
     */
    default void copyToHost(List<Transfer> transfers) {
        for (Transfer t : transfers) {
            copyToHost(t.buffer(), t.offset(), t.host());
        }
    }

    /** Each transfer's host bytes into its device range, as {@link #copyToHost(List)} does the other way. */
    default void copyFromHost(List<Transfer> transfers) {
        for (Transfer t : transfers) {
            copyFromHost(t.host(), t.buffer(), t.offset());
        }
    }

    /**
     * As {@link #copyToHost(List)}, for bytes no running work reads or writes (a KV page offloaded while a step runs):
     * a GPU moves them on a copy stream beside its compute work instead of behind it. Returns once they are copied.
     */
    default void moveToHost(List<Transfer> transfers) {
        copyToHost(transfers);
    }

    /** As {@link #moveToHost}, host to device (a KV page reloaded onto pages no running work touches). */
    default void moveFromHost(List<Transfer> transfers) {
        copyFromHost(transfers);
    }

    /** Waits until every operation issued on this device has completed. */
    void synchronize();

    /** A snapshot, safe to read from any thread (metrics). */
    DeviceMemoryStats stats();

    /** Releases everything the device holds; buffers still allocated are reported as leaked in the log. */
    @Override
    void close();
}
