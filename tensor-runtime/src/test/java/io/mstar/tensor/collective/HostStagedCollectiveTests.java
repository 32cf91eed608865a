package io.mstar.tensor.collective;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;

/**
 * The staged collective with ranks as threads: each rank's buffers on a device of its own (a host device standing for
 * its GPU: the staging is the same copies), the shared-memory collective on another. Every operation gives what the
 * shared-memory one gives on the staging device, at offsets of the rank's buffers, and the staging copy is freed at
 * close.
 */
class HostStagedCollectiveTests {

    @TempDir
    Path dir;

    private ThreadRanks ranks;

    @AfterEach
    void theStagingCopiesAreFreed() throws Exception {
        ranks.close();
        for (HostDevice device : ranks.devices()) {
            assertThat(device.stats().liveBuffers()).as("live buffers of %s", device.name()).isZero();
            device.close();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void everyOperationMovesTheRanksBytesThroughTheHost(int size) throws Exception {
        int n = 700;
        long seed = 23;
        ranks = new ThreadRanks(dir, size, 1 << 12, Duration.ofSeconds(30));
        List<Object[]> results = ranks.run((c, staging) -> {
            try (HostDevice own = new HostDevice("rank-" + c.rank(), 1L << 20);
                    HostStagedCollective staged = new HostStagedCollective(c, staging, own)) {
                HostBuffer sum = own.allocate(16 + 4L * n);
                RankData.write(sum, 16, RankData.floats(seed, c.rank(), n));
                staged.allReduceSum(sum, 16, n);
                HostBuffer rootBytes = own.allocate(3 + n);
                RankData.write(rootBytes, 3, RankData.bytes(seed, c.rank(), n));
                staged.broadcast(rootBytes, 3, n);
                HostBuffer in = own.allocate(1 + n);
                RankData.write(in, 1, RankData.bytes(seed + 1, c.rank(), n));
                HostBuffer out = own.allocate(5L + (long) n * size);
                staged.allGather(in, 1, out, 5, n);
                HostBuffer inPlace = own.allocate((long) n * size);
                RankData.write(inPlace, (long) n * c.rank(), RankData.bytes(seed + 2, c.rank(), n));
                staged.allGather(inPlace, (long) n * c.rank(), inPlace, 0, n);
                staged.barrier();
                Object[] got = {RankData.bits(sum, 16, n), RankData.read(rootBytes, 3, n),
                    RankData.read(out, 5, n * size), RankData.read(inPlace, 0, n * size)};
                for (HostBuffer b : List.of(sum, rootBytes, in, out, inPlace)) {
                    own.free(b);
                }
                return got;
            }
        });
        for (int r = 0; r < size; r++) {
            Object[] got = results.get(r);
            assertThat((int[]) got[0]).as("rank %d: the sum, in rank order", r)
                    .isEqualTo(RankData.bits(RankData.rankOrderSum(seed, size, n)));
            assertThat((byte[]) got[1]).as("rank %d: rank 0's bytes", r).isEqualTo(RankData.bytes(seed, 0, n));
            assertThat((byte[]) got[2]).as("rank %d: gathered into another buffer", r).isEqualTo(gathered(seed + 1, size, n));
            assertThat((byte[]) got[3]).as("rank %d: gathered in place", r).isEqualTo(gathered(seed + 2, size, n));
        }
    }

    private static byte[] gathered(long seed, int size, int n) {
        byte[] all = new byte[n * size];
        for (int r = 0; r < size; r++) {
            System.arraycopy(RankData.bytes(seed, r, n), 0, all, r * n, n);
        }
        return all;
    }
}
