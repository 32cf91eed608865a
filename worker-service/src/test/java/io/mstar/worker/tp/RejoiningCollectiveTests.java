package io.mstar.worker.tp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;

/**
 * A rank's group joined at its first call, dropped when a call fails, and joined again at the next: two ranks as
 * threads; rank 1 goes away (its group aborted, as a killed worker's ends in a timeout), rank 0's waiting call fails,
 * and once both call again they meet in a new group and their all-gather moves the right bytes.
 */
class RejoiningCollectiveTests {

    static final Duration TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    @Test
    void aFailedGroupIsJoinedAgainAtTheNextCall() throws Exception {
        Path file = dir.resolve("mstar-collective.rejoin");
        try (HostDevice d0 = new HostDevice("host-0", 1 << 20); HostDevice d1 = new HostDevice("host-1", 1 << 20);
                RejoiningCollective r0 = rank(file, 0); RejoiningCollective r1 = rank(file, 1)) {
            assertThat(r0.joins()).as("nothing joined before the first call").isZero();
            assertThat(both(() -> gather(r0, d0, 10), () -> gather(r1, d1, 11))).isEqualTo(new long[] {10, 11});
            assertThat(r0.joins()).isEqualTo(1);

            r1.abort(); // rank 1 leaves: the group is over for both
            assertThatThrownBy(() -> gather(r0, d0, 12)).isInstanceOf(CollectiveException.class);

            assertThat(both(() -> gather(r0, d0, 20), () -> gather(r1, d1, 21))).as("a new group")
                    .isEqualTo(new long[] {20, 21});
            assertThat(r0.joins()).isEqualTo(2);
            assertThat(r1.joins()).isEqualTo(2);
        }
    }

    @Test
    void ranksSetUpOtherwiseFailEveryCallNamingTheSetup() throws Exception {
        Path file = dir.resolve("mstar-collective.setup");
        try (HostDevice d0 = new HostDevice("host-0", 1 << 20); HostDevice d1 = new HostDevice("host-1", 1 << 20);
                RejoiningCollective r0 = new RejoiningCollective(settings(file, 0), d0, "kv-host-pool-factor 4.0");
                RejoiningCollective r1 = new RejoiningCollective(settings(file, 1), d1, "kv-host-pool-factor 2.0")) {
            CompletableFuture<Throwable> first = CompletableFuture.supplyAsync(() -> failureOf(() -> gather(r0, d0, 1)));
            Throwable second = failureOf(() -> gather(r1, d1, 2));
            for (Throwable t : List.of(first.get(2 * TIMEOUT.toSeconds(), TimeUnit.SECONDS), second)) {
                assertThat(t).isInstanceOfSatisfying(CollectiveException.class,
                        e -> assertThat(e.reason()).isEqualTo(CollectiveException.Reason.INVALID_ARGUMENT))
                        .hasMessageContaining("set up otherwise").hasMessageContaining("kv-host-pool-factor");
            }
            assertThat(d0.stats().bytesInUse()).isZero();
        }
        try (HostDevice d0 = new HostDevice("host-0", 1 << 20); HostDevice d1 = new HostDevice("host-1", 1 << 20);
                RejoiningCollective r0 = new RejoiningCollective(settings(file, 0), d0, "same");
                RejoiningCollective r1 = new RejoiningCollective(settings(file, 1), d1, "same")) {
            assertThat(both(() -> gather(r0, d0, 5), () -> gather(r1, d1, 6))).isEqualTo(new long[] {5, 6});
        }
    }

    static Throwable failureOf(Runnable call) {
        try {
            call.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static SharedMemoryCollectiveSettings settings(Path file, int rank) {
        return new SharedMemoryCollectiveSettings(file, rank, 2, SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES / 16,
                TIMEOUT);
    }

    private static RejoiningCollective rank(Path file, int rank) {
        return new RejoiningCollective(new SharedMemoryCollectiveSettings(file, rank, 2,
                SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES / 16, TIMEOUT));
    }

    /** Rank 0's value from {@code a} and rank 1's from {@code b}, run at once; each answers both ranks' values. */
    static long[] both(java.util.concurrent.Callable<long[]> a, java.util.concurrent.Callable<long[]> b)
            throws Exception {
        CompletableFuture<long[]> first = CompletableFuture.supplyAsync(() -> call(a));
        long[] second = b.call();
        long[] got = first.get(2 * TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(second).as("every rank gets the same bytes").isEqualTo(got);
        return got;
    }

    private static long[] call(java.util.concurrent.Callable<long[]> c) {
        try {
            return c.call();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static long[] gather(RejoiningCollective collective, HostDevice device, long value) {
        DeviceBuffer buffer = device.allocate(2 * Long.BYTES);
        try {
            ByteBuffer own = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value);
            device.copyFromHost(own, buffer, (long) collective.rank() * Long.BYTES);
            collective.allGather(buffer, (long) collective.rank() * Long.BYTES, buffer, 0, Long.BYTES);
            ByteBuffer all = ByteBuffer.allocateDirect(2 * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(buffer, 0, all);
            return new long[] {all.getLong(0), all.getLong(Long.BYTES)};
        } finally {
            device.free(buffer);
        }
    }
}
