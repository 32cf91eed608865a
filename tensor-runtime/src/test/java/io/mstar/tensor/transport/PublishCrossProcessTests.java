package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.ChildJvm;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.TestPattern;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import io.mstar.tensor.bookkeeping.Collectable;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Baseline;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The producer publish path end to end: this JVM is the producer (store on a host device, arena, publisher, tensor
 * server), a second JVM the consumer ({@link TensorConsumerMain}) reading with a real {@link TensorReader}. The store
 * is confined to the test thread, as it is to the engine loop in a worker: the server's I/O threads never call it
 * (the store would fail loudly if they did), they only pin and unpin in the publisher's {@link ServedTensors}.
 */
class PublishCrossProcessTests {

    private static final int SEGMENT = 8 << 20;

    @TempDir
    static Path dir;

    static ChildJvm consumer;

    final HostDevice device = new HostDevice("host", 256 << 20);
    final TensorUuids uuids = new TensorUuids(7, new Random(7));
    PlainTensorBookkeeping books;
    ShmArena arena;
    TensorPublisher publisher;
    TensorStore store;
    TensorServer server;

    @BeforeAll
    static void startConsumer() throws Exception {
        consumer = ChildJvm.start(TensorConsumerMain.class, dir.toString());
        assertThat(consumer.readLine()).isEqualTo("READY");
    }

    @AfterAll
    static void stopConsumer() throws Exception {
        consumer.send("QUIT");
        assertThat(consumer.readLine()).isEqualTo("BYE");
        assertThat(consumer.waitFor(20)).isZero();
    }

    @BeforeEach
    void producer() {
        books = new PlainTensorBookkeeping();
        arena = new ShmArena(new ArenaSettings(dir, "worker-7", SEGMENT, 1, 256), ShmPlacementListener.of(books));
        publisher = new TensorPublisher(arena);
        store = new TensorStore(books, publisher);
        server = TensorServer.start(publisher.source(), "127.0.0.1", 0, "127.0.0.1", 2);
    }

    @AfterEach
    void closeProducer() {
        store.removeAll();
        server.close();
        arena.close();
        device.close();
    }

    /** Stores a pattern-filled tensor for request {@code r-1} with the producer's references for {@code copies}. */
    private long put(int nbytes, int copies) {
        long uuid = uuids.next();
        HostBuffer buffer = device.allocate(nbytes);
        TestPattern.fill(buffer.bytes(), uuid);
        store.putTensor("r-1", uuid, buffer, new TensorPointerInfo(uuid, List.of((long) nbytes), List.of(1L), "uint8",
                nbytes, buffer.address(), server.sessionId(), "worker-7"), null);
        store.incrementRef(uuid, 1); // the safety hold while the output is routed...
        store.incrementRef(uuid, copies); // ...replaced by one reference per routed copy (§6)
        store.dereference(uuid, 1);
        return uuid;
    }

    private static String read(SameHostPolicy policy, TensorPointerInfo info) throws Exception {
        consumer.send("READ " + policy + " " + info.uuid() + " " + info.nbytes() + " " + info.sourceSessionId() + " "
                + (info.shmSegment() == null ? "-" : info.shmSegment()) + " " + info.shmOffset());
        return consumer.readLine();
    }

    private void assertBaseline() {
        Baseline.of("producer")
                .zero("tensors held", store.liveTensorCount())
                .zero("bookkeeping records", books.liveCount())
                .zero("device bytes", device.stats().bytesInUse())
                .zero("device buffers", device.stats().liveBuffers())
                .zero("arena bytes used", arena.occupancy().usedBytes())
                .zero("arena slots", arena.occupancy().liveSlots())
                .zero("spill files", arena.occupancy().spilledFiles())
                .zero("pins", publisher.source().pins())
                .zero("served tensors", publisher.source().live())
                .zero("published", publisher.publishedCount())
                .check();
    }

    @Test
    void secondProcessReadsPublishedTensorsThroughTheArenaAndOverHttpAndTheAcksBringEverythingBack() throws Exception {
        long inSegment = put(1_000_003, 2);
        long spilled = put(SEGMENT + 4096, 1); // larger than a segment: its own file, no segment in the descriptor

        List<TensorPointerInfo> infos = publisher.publish(store, new long[] {inSegment, spilled});

        assertThat(infos.get(0).shmSegment()).isNotNull();
        assertThat(infos.get(1).shmSegment()).isNull();
        assertThat(read(SameHostPolicy.HOST_AND_FILE, infos.get(0))).isEqualTo("OK SHM");
        assertThat(read(SameHostPolicy.NEVER, infos.get(0))).isEqualTo("OK HTTP");
        assertThat(read(SameHostPolicy.HOST_AND_FILE, infos.get(1))).as("spilled: over HTTP").isEqualTo("OK HTTP");
        assertThat(arena.occupancy().usedBytes()).isPositive();

        // the consumers' TensorReceived: two reads of the first, one of the second
        Collectable collectable = store.dereferenceBatch(new long[] {inSegment, spilled}, new int[] {2, 1}, true);
        assertThat(collectable.uuids()).containsExactly(inSegment, spilled);
        for (long uuid : collectable.uuids()) {
            store.removeTensor(uuid);
        }

        assertBaseline();
    }

    @Test
    void readAfterRemovalIsGoneAndANeverPublishedTensorIsUnknown() throws Exception {
        long uuid = put(4096, 1);
        long neverPublished = put(4096, 1);
        TensorPointerInfo info = publisher.publish(store, uuid);
        assertThat(read(SameHostPolicy.NEVER, info)).isEqualTo("OK HTTP");
        assertThat(read(SameHostPolicy.NEVER, store.getInfo(neverPublished))).isEqualTo("FAILED UNKNOWN_TENSOR");

        store.dereference(uuid, 1);
        assertThat(store.canGc(uuid)).isTrue();
        store.removeTensor(uuid);

        assertThat(read(SameHostPolicy.NEVER, info)).isEqualTo("FAILED FREED");
        store.removeTensor(neverPublished);
        assertBaseline();
    }

    @Test
    void removalWhileAReadIsPinnedFreesTheSlotOnlyAfterTheRead() throws Exception {
        int nbytes = 24 << 20; // far more than the socket buffers hold, so the write stays open
        long uuid = put(nbytes, 1);
        TensorPointerInfo info = publisher.publish(store, uuid);
        consumer.send("HOLD 127.0.0.1 " + server.port() + " " + uuid);
        assertThat(consumer.readLine()).isEqualTo("HELD 200");
        assertThat(publisher.source().pins()).isEqualTo(1);

        // a teardown: the producer drops its reference and removes the tensor while the read is on the wire
        store.dereference(uuid, 1);
        store.removeTensor(uuid);

        assertThat(store.liveTensorCount()).isZero();
        assertThat(device.stats().bytesInUse()).as("the device buffer goes at once: peers read the staged copy")
                .isZero();
        assertThat(arena.occupancy().usedBytes()).as("the slot waits for the pinned read").isPositive();
        assertThat(publisher.source().live()).isEqualTo(1);
        assertThat(read(SameHostPolicy.NEVER, info)).as("a new read sees it freed").isEqualTo("FAILED FREED");

        consumer.send("DRAIN " + uuid);
        assertThat(consumer.readLine()).as("the pinned read got the original bytes").isEqualTo("OK " + nbytes);
        eventually(() -> publisher.source().live() == 0 && arena.occupancy().usedBytes() == 0);
        assertBaseline();
    }

    private static void eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not met within 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
