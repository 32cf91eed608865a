package io.mstar.tensor;

import io.mstar.tensor.device.DeviceBuffer;

/**
 * What {@link TensorStore} does with a buffer it removes. The store calls it exactly once per tensor, and from
 * then on the buffer belongs to the release: it must free it exactly once, now or later.
 *
 * <p>{@link #FREE_NOW} returns the buffer to its device at once. A producer that serves tensors to peers wires
 * the transport's {@code TensorPublisher}: it frees the device buffer at once (peers read a staged arena copy) and
 * defers the arena slot's free while a server read has it pinned, so a peer never reads reused memory.
 */
@FunctionalInterface
public interface TensorRelease {

    /** Frees on the buffer's own device, on the calling (owner) thread. */
    TensorRelease FREE_NOW = (uuid, buffer) -> buffer.device().free(buffer);

    void release(long uuid, DeviceBuffer buffer);
}
