package io.mstar.tensor.collective;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;

import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;

/**
 * One rank's part of a long random run: every rank draws the same calls, sizes and offsets from one seed (as ranks
 * running one model in lockstep do), contributes data of its own, and checks each result against what every rank
 * contributed.
 */
final class RankOps {

    private final long seed;
    private final Collective collective;
    private final HostDevice device;

    RankOps(long seed, Collective collective, HostDevice device) {
        this.seed = seed;
        this.collective = collective;
        this.device = device;
    }

    /** The run's seed, printed ({@code -Dmstar.test.seed=N} repeats it). */
    static long seed() {
        return Seeds.of("SharedMemoryCollectiveTests.aThousandRandomCallsInARowAllCheck");
    }

    /** Makes {@code calls} calls, checking each; returns how many were checked. */
    int run(int calls) {
        Random draws = new Random(seed);
        int rank = collective.rank();
        int size = collective.size();
        for (int i = 0; i < calls; i++) {
            long data = seed + i;
            int offset = draws.nextInt(4) * 4;
            String what = "call " + i + " of seed " + seed;
            switch (draws.nextInt(4)) {
                case 0 -> {
                    int floats = draws.nextInt(800);
                    HostBuffer b = device.allocate(offset + 4L * floats);
                    RankData.write(b, offset, RankData.floats(data, rank, floats));
                    collective.allReduceSum(b, offset, floats);
                    assertThat(RankData.bits(b, offset, floats)).as(what)
                            .isEqualTo(RankData.bits(RankData.rankOrderSum(data, size, floats)));
                    device.free(b);
                }
                case 1 -> {
                    int bytes = draws.nextInt(3000);
                    HostBuffer b = device.allocate(offset + bytes);
                    RankData.write(b, offset, RankData.bytes(data, rank, bytes));
                    collective.broadcast(b, offset, bytes);
                    assertThat(RankData.read(b, offset, bytes)).as(what).isEqualTo(RankData.bytes(data, 0, bytes));
                    device.free(b);
                }
                case 2 -> {
                    int per = draws.nextInt(1200);
                    HostBuffer in = device.allocate(per);
                    HostBuffer out = device.allocate(offset + (long) per * size);
                    RankData.write(in, 0, RankData.bytes(data, rank, per));
                    collective.allGather(in, 0, out, offset, per);
                    byte[] got = RankData.read(out, offset, per * size);
                    for (int r = 0; r < size; r++) {
                        assertThat(Arrays.copyOfRange(got, r * per, (r + 1) * per)).as(what + ", rank %d's part", r)
                                .isEqualTo(RankData.bytes(data, r, per));
                    }
                    device.free(in);
                    device.free(out);
                }
                default -> collective.barrier();
            }
        }
        return calls;
    }
}
