package io.mstar.bench.tensor;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.SameHostPolicy;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.tensor.transport.TensorServerSettings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What read grants cost (docs/security.md): one HTTP tensor read of {@code size} bytes through the real
 * {@link TensorReader} and {@link TensorServer} on loopback, with a grant minted by the reader and checked by the
 * server ({@code grantedRead}), against the same read from a server that checks none ({@code openRead}) in the same
 * run; and the grant's own work, mint plus check ({@code mintAndCheck}). The goal: a 4 KiB read with grants costs
 * under 5 % more than without, i.e. {@code openRead / grantedRead} throughput at least 0.95.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ReadGrantBenchmark {

    private static final byte[] SECRET = "benchmark-data-plane-secret-of-32-bytes".getBytes(StandardCharsets.UTF_8);
    private static final long UUID = 7;

    @Param({"4096"})
    public int size;

    private final ReadGrants grants = ReadGrants.signedWith(SECRET, Duration.ofSeconds(60), Clock.systemUTC());
    private Path arenaDir;
    private ServedTensors tensors;
    private TensorServer granted;
    private TensorServer open;
    private ArenaReader arena;
    private TensorReader grantingReader;
    private TensorReader plainReader;
    private TensorPointerInfo atGranted;
    private TensorPointerInfo atOpen;
    private ByteBuffer destination;

    @Setup(Level.Trial)
    public void setup() throws IOException {
        arenaDir = Files.createTempDirectory("mstar-bench-grants-");
        tensors = new ServedTensors();
        ByteBuffer bytes = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            bytes.put(i, (byte) i);
        }
        tensors.publish(UUID, bytes, () -> { });
        granted = TensorServer.start(tensors, new TensorServerSettings("127.0.0.1", 0, "127.0.0.1", 1, "worker"),
                grants, new SimpleMeterRegistry());
        open = TensorServer.start(tensors, new TensorServerSettings("127.0.0.1", 0, "127.0.0.1", 1, "worker"),
                ReadGrants.disabled(), new SimpleMeterRegistry());
        ReaderSettings settings = ReaderSettings.defaults("conductor", Set.of("127.0.0.1"))
                .withSameHost(SameHostPolicy.NEVER).withArenaDirectory(arenaDir);
        arena = new ArenaReader(arenaDir);
        grantingReader = new TensorReader(settings, arena, new SimpleMeterRegistry(), grants, "conductor");
        plainReader = new TensorReader(settings, arena, new SimpleMeterRegistry());
        atGranted = descriptor(granted);
        atOpen = descriptor(open);
        destination = ByteBuffer.allocateDirect(size);
    }

    private TensorPointerInfo descriptor(TensorServer server) {
        return new TensorPointerInfo(UUID, List.of((long) size), List.of(1L), "uint8", size, 0L,
                "127.0.0.1:" + server.port(), "worker-0");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        grantingReader.close();
        plainReader.close();
        granted.close();
        open.close();
        arena.close();
        Files.deleteIfExists(arenaDir);
    }

    @Benchmark
    public Object grantedRead() throws Exception {
        destination.clear();
        return grantingReader.read("bench", atGranted, destination).get(10, TimeUnit.SECONDS);
    }

    @Benchmark
    public Object openRead() throws Exception {
        destination.clear();
        return plainReader.read("bench", atOpen, destination).get(10, TimeUnit.SECONDS);
    }

    @Benchmark
    public Object mintAndCheck() {
        return grants.check(grants.issue(UUID, "conductor"), UUID);
    }
}
