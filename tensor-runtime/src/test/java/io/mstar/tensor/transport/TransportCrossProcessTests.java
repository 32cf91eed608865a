package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.ChildJvm;
import io.mstar.tensor.TestPattern;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.wire.TensorReceived;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A producer in a second JVM (arena + tensor server); this JVM reads from it. */
class TransportCrossProcessTests {

    @TempDir
    static Path dir;

    static ChildJvm producer;
    static String session;

    @BeforeAll
    static void startProducer() throws Exception {
        producer = ChildJvm.start(TensorServerMain.class, dir.toString());
        String ready = producer.readLine();
        assertThat(ready).startsWith("READY ");
        session = "127.0.0.1:" + ready.substring("READY ".length());
    }

    @AfterAll
    static void stopProducer() throws Exception {
        producer.send("QUIT");
        assertThat(producer.readLine()).isEqualTo("BYE");
        assertThat(producer.waitFor(20)).isZero();
        assertThat(dir.toFile().list()).as("producer's close removed its arena files").isEmpty();
    }

    private static String[] put(long uuid, long nbytes) throws Exception {
        producer.send("PUT " + uuid + " " + nbytes);
        String[] reply = producer.readLine().split(" ");
        assertThat(reply[0]).isEqualTo("PUT");
        return reply;
    }

    private static TensorPointerInfo descriptor(long uuid, long nbytes, long offset, String segment, long shmOffset) {
        return new TensorPointerInfo(uuid, List.of(nbytes), List.of(1L), "uint8", nbytes, 0L, offset, session,
                "worker-5", 1, 0, segment, shmOffset, null, null);
    }

    private static TensorReader reader(SimpleMeterRegistry registry, SameHostPolicy policy) {
        return new TensorReader(ReaderSettings.defaults("worker", Set.of("127.0.0.1")).withArenaDirectory(dir)
                .withSameHost(policy), new ArenaReader(dir), registry);
    }

    @Test
    void readsWholeTensorsAndByteRangesOverHttp() throws Exception {
        String[] inSegment = put(101, 3_000_003);
        String[] spilled = put(102, 9 << 20); // larger than the producer's 8 MiB segment
        assertThat(spilled[2]).contains("spill");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TensorReader reader = reader(registry, SameHostPolicy.NEVER)) {
            record Case(long uuid, long nbytes, long offset, String[] placed) { }
            List<Case> cases = List.of(new Case(101, 3_000_003, 0, inSegment), new Case(101, 5000, 1001, inSegment),
                    new Case(101, 1, 3_000_002, inSegment), new Case(102, 9 << 20, 0, spilled),
                    new Case(102, 123_457, 4_000_000, spilled));
            long total = 0;
            for (Case c : cases) {
                ByteBuffer dst = ByteBuffer.allocateDirect((int) c.nbytes() + 16);
                dst.position(16); // bytes land from the destination's position
                ReadResult r = reader.read("r-1", descriptor(c.uuid(), c.nbytes(), c.offset(), c.placed()[2],
                        Long.parseLong(c.placed()[3])), dst).get(20, TimeUnit.SECONDS);
                assertThat(r.transport()).isEqualTo(Transport.HTTP);
                assertThat(dst.position()).as("caller's position untouched").isEqualTo(16);
                assertThat(TestPattern.firstMismatch(dst, c.uuid(), c.offset())).as("%s", c).isEqualTo(-1);
                total += c.nbytes();
            }
            assertThat(reader.inFlight("r-1")).isDone();
            assertThat(reader.takeReceived("r-1")).contains(new TensorReceived("r-1", Map.of(101L, 3, 102L, 2), List.of()));
            assertThat(reader.takeReceived("r-1")).isEmpty();
            assertThat(registry.get("mstar.worker.tensor.transfer.bytes").tag("transport", "http").counter().count())
                    .isEqualTo((double) total);
            assertThat(registry.get("mstar.worker.tensor.transfer").tag("transport", "http").timer().count()).isEqualTo(5);
        }
        assertThat(registry.getMeters()).as("meters removed on close").isEmpty();
    }

    @Test
    void sameHostReadsGoThroughTheArenaAndOtherHostsOverHttp() throws Exception {
        String[] placed = put(201, 1_000_000);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TensorReader reader = reader(registry, SameHostPolicy.HOST_AND_FILE)) {
            TensorPointerInfo info = descriptor(201, 700_000, 300_000, placed[2], Long.parseLong(placed[3]));
            ByteBuffer dst = ByteBuffer.allocateDirect(700_000);
            assertThat(reader.read("r-2", info, dst).get(20, TimeUnit.SECONDS).transport()).isEqualTo(Transport.SHM);
            assertThat(TestPattern.firstMismatch(dst, 201, 300_000)).isEqualTo(-1);
            assertThat(registry.get("mstar.worker.tensor.transfer.bytes").tag("transport", "shm").counter().count())
                    .isEqualTo(700_000.0);

            // a small read is copied on the calling thread: done when read() returns
            TensorPointerInfo small = descriptor(201, 4096, 12_345, placed[2], Long.parseLong(placed[3]));
            ByteBuffer smallDst = ByteBuffer.allocateDirect(4096);
            CompletableFuture<ReadResult> inline = reader.read("r-2", small, smallDst);
            assertThat(inline).isDone();
            assertThat(inline.get().transport()).isEqualTo(Transport.SHM);
            assertThat(TestPattern.firstMismatch(smallDst, 201, 12_345)).isEqualTo(-1);
            assertThat(registry.get("mstar.worker.tensor.transfer").tag("transport", "shm").timer().count()).isEqualTo(2);
            assertThat(reader.takeReceived("r-2")).contains(new TensorReceived("r-2", Map.of(201L, 2), List.of()));

            // an arena copy that fails (here: a placement past the segment's end) is retried over HTTP
            TensorPointerInfo misplaced = descriptor(201, 4096, 8192, placed[2], 1L << 40);
            ByteBuffer retriedDst = ByteBuffer.allocateDirect(4096);
            assertThat(reader.read("r-2", misplaced, retriedDst).get(20, TimeUnit.SECONDS).transport()).isEqualTo(Transport.HTTP);
            assertThat(TestPattern.firstMismatch(retriedDst, 201, 8192)).isEqualTo(-1);

            TensorPointerInfo elsewhere = new TensorPointerInfo(201, List.of(1L), List.of(1L), "uint8", 10, 0L, 0,
                    "10.1.2.3:7000", "worker-5", 1, 0, placed[2], 0L, null, null);
            assertThat(reader.arenaPath(elsewhere)).as("another host's session is never read from our /dev/shm").isFalse();
            TensorPointerInfo noSegment = descriptor(201, 10, 0, null, 0);
            assertThat(reader.arenaPath(noSegment)).isFalse();
            TensorPointerInfo missingFile = descriptor(201, 10, 0, "mstar.worker-5.1.abc.seg9", 0);
            assertThat(reader.arenaPath(missingFile)).isFalse();
        }
    }

    @Test
    void readOfAFreedTensorFailsWithATypedExceptionAndIsReportedFailed() throws Exception {
        String[] placed = put(301, 4096);
        producer.send("FREE 301");
        assertThat(producer.readLine()).isEqualTo("FREED true");
        try (TensorReader reader = reader(new SimpleMeterRegistry(), SameHostPolicy.NEVER)) {
            ByteBuffer dst = ByteBuffer.allocateDirect(4096);
            assertThatThrownBy(() -> reader.read("r-3", descriptor(301, 4096, 0, placed[2], 0), dst).get(20, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(TensorFreedException.class)
                    .satisfies(e -> assertThat(((TensorTransportException) e).retriable()).isFalse());
            assertThatThrownBy(() -> reader.read("r-3", descriptor(399, 4096, 0, null, 0), dst).get(20, TimeUnit.SECONDS))
                    .cause().isInstanceOf(TensorUnknownException.class);
            assertThat(reader.takeReceived("r-3")).contains(new TensorReceived("r-3", Map.of(), List.of(301L, 399L)));
            assertThat(reader.inFlightCount("r-3")).isZero();
        }
    }

    @Test
    void serverAnswersRangesWithPartialContentAndStatusesByWhatHappened() throws Exception {
        put(401, 10_000);
        put(402, 10);
        producer.send("FREE 402");
        assertThat(producer.readLine()).isEqualTo("FREED true");
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<byte[]> partial = client.send(get(401).header("Range", "bytes=100-199").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(partial.statusCode()).isEqualTo(206);
        assertThat(partial.headers().firstValue("Content-Range")).contains("bytes 100-199/10000");
        assertThat(partial.body()).hasSize(100);
        assertThat(TestPattern.firstMismatch(ByteBuffer.wrap(partial.body()), 401, 100)).isEqualTo(-1);
        HttpResponse<byte[]> suffix = client.send(get(401).header("Range", "bytes=-10").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(suffix.headers().firstValue("Content-Range")).contains("bytes 9990-9999/10000");
        HttpResponse<byte[]> whole = client.send(get(401).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(whole.statusCode()).isEqualTo(200);
        assertThat(whole.body()).hasSize(10_000);
        assertThat(client.send(get(401).header("Range", "bytes=10000-").build(), HttpResponse.BodyHandlers.discarding())
                .statusCode()).isEqualTo(416);
        assertThat(client.send(get(402).build(), HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(410);
        assertThat(client.send(get(499).build(), HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(404);
        producer.send("STATS");
        assertThat(producer.readLine()).as("no pin outlives its response").matches("STATS \\d+ 0 \\d+");
    }

    private static HttpRequest.Builder get(long uuid) {
        return HttpRequest.newBuilder(URI.create("http://" + session + "/tensors/" + uuid));
    }
}
