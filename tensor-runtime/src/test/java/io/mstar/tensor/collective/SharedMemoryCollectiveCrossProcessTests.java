package io.mstar.tensor.collective;

import static io.mstar.tensor.collective.SharedMemoryCollectiveTests.failureOf;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.tensor.ChildJvm;
import io.mstar.tensor.collective.CollectiveException.Reason;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;

/**
 * The shared-memory collective between real processes: a second JVM ({@link CollectiveRankMain}) joins as rank 1 and
 * gets the same sum as this one; killed before the call, it fails this rank with TIMEOUT within the bound.
 */
class SharedMemoryCollectiveCrossProcessTests {

    private static final int FLOATS = 10_000; // 40 KB through slots of 4 KiB: ten rounds
    private static final long CAPACITY = 4096;
    private static final long SEED = 21;

    @TempDir
    Path dir;

    private final HostDevice device = new HostDevice();

    @AfterEach
    void nothingLeft() {
        assertThat(device.stats().liveBuffers()).isZero();
        device.close();
        assertThat(dir).isEmptyDirectory();
    }

    @Test
    void aSecondProcessJoinsAsRankOneAndGetsTheSameBits() throws Exception {
        Path file = dir.resolve("mstar-collective.two-processes");
        try (ChildJvm child = startRankOne(file)) {
            assertThat(child.readLine()).isEqualTo("READY");
            try (SharedMemoryCollective rank0 = SharedMemoryCollective.join(settings(file, Duration.ofSeconds(60)))) {
                assertThat(child.readLine()).isEqualTo("JOINED");
                child.send("GO");
                HostBuffer buffer = device.allocate(4L * FLOATS);
                RankData.write(buffer, 0, RankData.floats(SEED, 0, FLOATS));
                rank0.allReduceSum(buffer, 0, FLOATS);
                int[] expected = RankData.bits(RankData.rankOrderSum(SEED, 2, FLOATS));
                assertThat(RankData.bits(buffer, 0, FLOATS)).isEqualTo(expected);
                assertThat(child.readLine()).isEqualTo("SUM " + Arrays.hashCode(expected));
                device.free(buffer);
            }
            assertThat(child.waitFor(30)).isZero();
        }
    }

    @Test
    void aChildKilledBeforeTheCallFailsThisRankWithTimeoutNotAHang() throws Exception {
        Path file = dir.resolve("mstar-collective.killed");
        Duration bound = Duration.ofSeconds(2);
        try (ChildJvm child = startRankOne(file)) {
            assertThat(child.readLine()).isEqualTo("READY");
            try (SharedMemoryCollective rank0 = SharedMemoryCollective.join(settings(file, bound))) {
                assertThat(child.readLine()).isEqualTo("JOINED");
                ProcessHandle handle = ProcessHandle.of(child.pid()).orElseThrow();
                handle.destroyForcibly();
                handle.onExit().get(30, TimeUnit.SECONDS);

                HostBuffer buffer = device.allocate(4L * FLOATS);
                long start = System.nanoTime();
                CollectiveException e = failureOf(() -> rank0.allReduceSum(buffer, 0, FLOATS));
                long tookMillis = (System.nanoTime() - start) / 1_000_000;
                device.free(buffer);

                assertThat(e.reason()).isEqualTo(Reason.TIMEOUT);
                assertThat(e.getMessage()).contains("ranks [1]");
                assertThat(tookMillis).as("failed within the bound (+5 s)").isLessThan(bound.toMillis() + 5_000);
            }
        }
    }

    private static SharedMemoryCollectiveSettings settings(Path file, Duration timeout) {
        return new SharedMemoryCollectiveSettings(file, 0, 2, CAPACITY, timeout);
    }

    private static ChildJvm startRankOne(Path file) throws Exception {
        return ChildJvm.start(CollectiveRankMain.class, file.toString(), "1", "2", Long.toString(CAPACITY), "60000",
                Integer.toString(FLOATS), Long.toString(SEED));
    }
}
