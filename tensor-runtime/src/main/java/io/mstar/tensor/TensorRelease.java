package io.mstar.tensor;

import io.mstar.tensor.device.DeviceBuffer;

/**
 * What {@link TensorStore} does with a buffer it removes. The store calls it exactly once per tensor, and from
 * then on the buffer belongs to the release: it must free it exactly once, now or later.
 *
 * <p>{@link #FREE_NOW} returns the buffer to its device at once. A producer that serves tensors to peers wires
 * one that defers the free while a read has the bytes pinned (the transport's {@code ServedTensors}), so a peer
 * never reads reused memory.
 */
@FunctionalInterface
public interface TensorRelease {

    /** Frees on the buffer's own device, on the calling (owner) thread. */
    TensorRelease FREE_NOW = (uuid, buffer) -> buffer.device().free(buffer);

    void release(long uuid, DeviceBuffer buffer);
}
