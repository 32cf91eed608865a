package io.mstar.worker.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.tensor.transport.TensorSource;
import io.mstar.worker.kernel.Int32Tensors;

/**
 * A producer whose tensor server holds every read until {@link #release()}: a read in flight for as long as a test
 * needs. Its descriptors carry no arena segment, so readers must come over HTTP.
 */
final class StallingTensorServer implements AutoCloseable {

    private final CountDownLatch gate = new CountDownLatch(1);
    private final int[] values;
    private final TensorServer server;

    StallingTensorServer(int[] values) {
        this.values = values.clone();
        TensorSource source = uuid -> {
            try {
                gate.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ByteBuffer bytes = ByteBuffer.allocate(this.values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
            bytes.asIntBuffer().put(this.values);
            return new TensorSource.Pin.Pinned(bytes.asReadOnlyBuffer(), () -> { });
        };
        server = TensorServer.start(source, "127.0.0.1", 0, "127.0.0.1", 1);
    }

    /** A descriptor of the stalled tensor, as if {@code entity} produced it. */
    TensorPointerInfo descriptor(long uuid, String entity) {
        return new TensorPointerInfo(uuid, List.of((long) values.length), List.of(1L), Int32Tensors.DTYPE,
                values.length * 4L, 1L, server.sessionId(), entity);
    }

    void release() {
        gate.countDown();
    }

    @Override
    public void close() {
        release();
        server.close();
    }
}
