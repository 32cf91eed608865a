package io.mstar.worker.streaming;

import java.util.List;

/**
 * What {@link StreamBuffer#close()} hands back when a request is removed.
 *
 * @param released landed tensors the buffer still held, now the caller's to drop, in stream order
 * @param unlanded uuids registered whose reads never landed here, in registration order: the caller owns
 *                 those reads and drops each tensor when (if) its read completes
 */
public record StreamRelease<T>(List<StreamEntry<T>> released, List<Long> unlanded) {

    public StreamRelease {
        released = List.copyOf(released);
        unlanded = List.copyOf(unlanded);
    }
}
