package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.TestPattern;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ArenaSlot;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import io.mstar.wire.TensorReceived;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request torn down while its tensor is on the wire: the producer's free waits for the read, the
 * read delivers the original bytes, and afterwards nothing is left pinned, in flight or in the arena.
 */
class TeardownDuringTransferTests {

    private static final int NBYTES = 24 << 20;

    @TempDir
    Path dir;

    ShmArena arena;
    ServedTensors tensors;
    long baseline;

    @BeforeEach
    void producer() {
        arena = new ShmArena(new ArenaSettings(dir, "worker-2", 32 << 20, 1, 256), ShmPlacementListener.NONE);
        tensors = new ServedTensors();
        baseline = arena.occupancy().usedBytes();
    }

    @AfterEach
    void close() {
        arena.close();
    }

    private ArenaSlot publish(long uuid) {
        ArenaSlot slot = arena.allocate(uuid, NBYTES);
        TestPattern.fill(slot.buffer(), uuid);
        tensors.publish(uuid, slot.buffer(), () -> arena.free(slot));
        return slot;
    }

    @Test
    void tensorReleasedMidReadIsFreedOnlyAfterTheReadLandsAndNothingLeaks() throws Exception {
        publish(7);
        CountDownLatch pinned = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        TensorSource gated = uuid -> { // pins first, then holds the server until the test lets it write
            TensorSource.Pin pin = tensors.pin(uuid);
            if (uuid == 7) {
                pinned.countDown();
                await(go);
            }
            return pin;
        };
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TensorServer server = TensorServer.start(gated, "127.0.0.1", 0, "127.0.0.1", 2);
             TensorReader reader = new TensorReader(ReaderSettings.defaults("worker", Set.of())
                     .withSameHost(SameHostPolicy.NEVER), new ArenaReader(dir), registry)) {
            TensorPointerInfo info = new TensorPointerInfo(7, List.of((long) NBYTES), List.of(1L), "uint8", NBYTES,
                    0L, server.sessionId(), "worker-2");
            ByteBuffer dst = ByteBuffer.allocateDirect(NBYTES);
            CompletableFuture<ReadResult> read = reader.read("r-td", info, dst);
            assertThat(pinned.await(10, TimeUnit.SECONDS)).isTrue();

            // teardown: the consumer drains, the producer frees
            CompletableFuture<Void> drained = reader.inFlight("r-td");
            assertThat(reader.inFlightCount("r-td")).isEqualTo(1);
            assertThat(registry.get("mstar.worker.tensor.reads.in.flight").tag("transport", "http").gauge().value())
                    .isEqualTo(1.0);
            assertThat(tensors.release(7)).as("free deferred while pinned").isFalse();
            assertThat(arena.occupancy().usedBytes()).isGreaterThan(baseline);
            assertThat(tensors.pin(7)).as("a new read sees it freed").isEqualTo(TensorSource.Pin.FREED);
            assertThat(drained).isNotDone();

            go.countDown();
            assertThat(read.get(20, TimeUnit.SECONDS).nbytes()).isEqualTo(NBYTES);
            assertThat(TestPattern.firstMismatch(dst, 7, 0)).as("the bytes were not reused under the read").isEqualTo(-1);
            drained.get(5, TimeUnit.SECONDS);
            assertThat(reader.takeReceived("r-td")).contains(new TensorReceived("r-td", Map.of(7L, 1), List.of()));
            reader.forget("r-td");

            eventually(() -> tensors.live() == 0 && arena.occupancy().usedBytes() == baseline);
            assertThat(tensors.pins()).isZero();
            assertThat(reader.trackedRequests()).isZero();
            assertThat(reader.inFlightReads(Transport.HTTP)).isZero();
            assertThatThrownBy(() -> tensors.release(7)).as("a second free is an error").isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void consumerThatGoesAwayMidTransferReleasesThePinAndTheDeferredFreeRuns() throws Exception {
        publish(8);
        try (TensorServer server = TensorServer.start(tensors, "127.0.0.1", 0, "127.0.0.1", 1)) {
            try (Socket socket = new Socket()) {
                socket.setReceiveBufferSize(4096); // the server cannot flush 24 MiB into this
                socket.connect(new java.net.InetSocketAddress("127.0.0.1", server.port()));
                OutputStream out = socket.getOutputStream();
                out.write("GET /tensors/8 HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = socket.getInputStream();
                byte[] head = new byte[12];
                assertThat(in.readNBytes(head, 0, 12)).isEqualTo(12);
                assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
                assertThat(tensors.pins()).isEqualTo(1);
                assertThat(tensors.release(8)).isFalse();
                assertThat(arena.occupancy().usedBytes()).isGreaterThan(baseline);
            } // the consumer vanishes with most of the body unread
            eventually(() -> tensors.pins() == 0 && tensors.live() == 0 && arena.occupancy().usedBytes() == baseline);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not met within 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
