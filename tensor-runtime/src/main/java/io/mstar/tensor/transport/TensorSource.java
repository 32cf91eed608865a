package io.mstar.tensor.transport;

import java.nio.ByteBuffer;

/**
 * Where the tensor server finds a tensor's bytes: {@link ServedTensors}, which a producer's
 * {@link TensorPublisher} feeds from its store (the store itself is owned by the engine loop and never
 * touched from the server's threads). The server needs three answers per uuid: here are the bytes
 * (pinned: they stay valid and unfreed until {@link Pin.Pinned#unpin()}), never heard of it, or it
 * was here and is gone. The last two are different HTTP statuses because they mean different bugs:
 * an unknown uuid is a wrong address; a freed one is a read after the producer's acks were counted.
 *
 * <p>Called on the server's I/O threads; implementations are thread-safe and quick.
 */
public interface TensorSource {

    Pin pin(long uuid);

    /** The outcome of {@link #pin}. */
    sealed interface Pin permits Pin.Pinned, Pin.Unknown, Pin.Freed {

        /**
         * The bytes, read-only, position 0 and limit {@code nbytes}. Until {@link #unpin()} the source
         * must neither free nor reuse them; a free requested meanwhile is deferred to the last unpin.
         */
        record Pinned(ByteBuffer bytes, Runnable unpin) implements Pin {
        }

        record Unknown() implements Pin {
        }

        record Freed() implements Pin {
        }

        Pin UNKNOWN = new Unknown();
        Pin FREED = new Freed();
    }
}
