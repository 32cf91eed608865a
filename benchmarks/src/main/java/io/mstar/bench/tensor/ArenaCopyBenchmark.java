package io.mstar.bench.tensor;

import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ArenaSlot;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
 * A consumer's same-host read: {@link ArenaReader#read} of {@code size} bytes from a segment that
 * ANOTHER PROCESS (a child JVM running {@link Writer}) allocated and filled, through this process's
 * own read-only mapping, into a direct buffer. Baseline in the same run: a plain direct-to-direct
 * {@code ByteBuffer.put} of the same number of bytes. Report arena/plain throughput; the goal is at
 * least 0.5 (the arena path costs a name parse, a cached-mapping lookup and bounds checks per read).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ArenaCopyBenchmark {

    @Param({"1048576", "16777216"})
    public int size;

    private Path directory;
    private Process writer;
    private ArenaReader reader;
    private String segment;
    private long offset;
    private ByteBuffer source;
    private ByteBuffer destination;

    @Setup(Level.Trial)
    public void setup() throws IOException {
        Path shm = Path.of("/dev/shm");
        directory = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
                "mstar-bench-");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        writer = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"), Writer.class.getName(),
                directory.toString(), Integer.toString(size)))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String ready = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8)).readLine();
        if (ready == null || !ready.startsWith("READY ")) {
            throw new IllegalStateException("writer process did not start: " + ready);
        }
        String[] parts = ready.split(" ");
        segment = parts[1];
        offset = Long.parseLong(parts[2]);
        reader = new ArenaReader(directory);
        destination = ByteBuffer.allocateDirect(size);
        source = ByteBuffer.allocateDirect(size);
        // same bytes for the baseline: read once through the arena, and check what the writer wrote
        reader.read(segment, offset, size, source);
        source.flip();
        for (int i = 0; i < size; i += 4093) {
            if (source.get(i) != (byte) (i * 31 + 7)) {
                throw new IllegalStateException("arena bytes differ from the writer's at " + i);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        reader.close();
        writer.getOutputStream().close(); // the writer closes its arena (deleting the segment) and exits
        writer.waitFor(10, TimeUnit.SECONDS);
        writer.destroyForcibly();
        try (var files = Files.list(directory)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(directory);
    }

    @Benchmark
    public ByteBuffer arenaRead() {
        destination.clear();
        reader.read(segment, offset, size, destination);
        return destination;
    }

    @Benchmark
    public ByteBuffer plainCopy() {
        destination.clear();
        destination.put(source.duplicate());
        return destination;
    }

    /** The producer process: places one tensor of {@code size} bytes, fills it, waits for stdin to close. */
    public static final class Writer {
        public static void main(String[] args) throws IOException {
            int size = Integer.parseInt(args[1]);
            try (ShmArena arena = new ShmArena(new ArenaSettings(Path.of(args[0]), "worker-0", 64L << 20, 1, 256),
                    ShmPlacementListener.NONE)) {
                arena.allocate(1, 4096); // so the measured tensor does not sit at offset 0
                ArenaSlot slot = arena.allocate(2, size);
                ByteBuffer b = slot.buffer();
                for (int i = 0; i < size; i++) {
                    b.put((byte) (i * 31 + 7));
                }
                System.out.println("READY " + slot.fileName() + " " + slot.offset());
                System.out.flush();
                while (System.in.read() >= 0) {
                    // wait for the benchmark to close our stdin
                }
            }
        }
    }
}
