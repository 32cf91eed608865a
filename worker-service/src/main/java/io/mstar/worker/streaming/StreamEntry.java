package io.mstar.worker.streaming;

import java.util.Objects;

/**
 * One token of a stream: the tensor that landed for a registered uuid, at its place in registration order.
 *
 * @param position 0-based place in registration order, i.e. in the stream
 * @param uuid the tensor's uuid as registered
 * @param tensor the engine's handle for the landed tensor
 */
public record StreamEntry<T>(long position, long uuid, T tensor) {

    public StreamEntry {
        Objects.requireNonNull(tensor, "tensor");
    }
}
