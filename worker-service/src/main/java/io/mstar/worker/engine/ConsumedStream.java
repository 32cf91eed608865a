package io.mstar.worker.engine;

import io.mstar.worker.streaming.ChunkPolicy;
import io.mstar.worker.streaming.StreamBuffer;

/**
 * A streaming edge one partition of a request consumes on this worker: its buffer, keyed by the producer's uuids and
 * holding local uuids (one node reference each, from landing until a chunk or close hands it back), and the element
 * type of the tokens seen, which an empty final chunk still needs. Owned by the engine loop.
 */
final class ConsumedStream {

    final StreamBuffer<Long> buffer;
    /** Bytes until a token landed: an empty stream's final chunk has no element type to copy. */
    String dtype = "uint8";

    ConsumedStream(ChunkPolicy policy) {
        this.buffer = new StreamBuffer<>(policy);
    }

    /** The read of the producer's {@code producerUuid} landed here as {@code localUuid}. */
    void landed(long producerUuid, long localUuid, String dtype) {
        buffer.landed(producerUuid, localUuid);
        this.dtype = dtype;
    }
}
