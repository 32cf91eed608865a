package io.mstar.worker.tp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.request.SamplingConfig;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.worker.kv.TokenSampler;

/**
 * Rank 0 draws and every rank gets its ids, whatever the other ranks' logits; a row whose draw fails for its request
 * reads {@link TensorParallelSampling#FAILED} everywhere; a draw that breaks on rank 0 fails its peers at once.
 */
class TensorParallelSamplingTests {

    private static final SamplingConfig GREEDY = new SamplingConfig(null, 0, 0, 1, false, 1, 0);

    @RegisterExtension
    final RankGroups groups = new RankGroups();

    /** What one rank's call answered and how many draws it made. */
    private record Drawn(int[] ids, int draws) {
    }

    @Test
    void everyRankGetsRankZerosDrawsAndAFailedRowFailsEverywhere() throws Exception {
        ThreadRanks ranks = groups.of(3, Duration.ofSeconds(30));
        List<Drawn> drawn = ranks.run((c, device) -> {
            // rank 0's greedy picks are 1, (NaN: unusable), 0; the other ranks' own rows would pick otherwise
            float[][] logits = c.rank() == 0
                    ? new float[][] {{0f, 5f, 1f}, {Float.NaN, 0f, 0f}, {9f, 1f, 2f}}
                    : new float[][] {{5f, 0f, 1f}, {0f, 0f, 1f}, {0f, 1f, 2f}};
            TokenSampler sampler = new TokenSampler();
            AtomicInteger draws = new AtomicInteger();
            int[] ids = new TensorParallelSampling(c, device).sample(logits, (j, row) -> {
                draws.incrementAndGet();
                return sampler.sample(row, GREEDY, 7, j);
            });
            return new Drawn(ids, draws.get());
        });
        for (int r = 0; r < drawn.size(); r++) {
            assertThat(drawn.get(r).ids()).as("rank %d", r).containsExactly(1, TensorParallelSampling.FAILED, 0);
            assertThat(drawn.get(r).draws()).as("draws on rank %d", r).isEqualTo(r == 0 ? 3 : 0);
        }
    }

    @Test
    void aDrawThatBreaksOnRankZeroFailsItsPeersAtOnce() throws Exception {
        ThreadRanks ranks = groups.of(2, Duration.ofSeconds(30));
        List<Throwable> thrown = ranks.run((c, device) -> {
            long start = System.nanoTime();
            Throwable e = catchThrowable(() -> new TensorParallelSampling(c, device).sample(new float[][] {{1f}},
                    (j, row) -> {
                        throw new IllegalStateException("a bug of the draw's");
                    }));
            assertThat(System.nanoTime() - start).as("long before the 30 s bound").isLessThan(10_000_000_000L);
            return e;
        });
        assertThat(thrown.get(0)).isInstanceOf(IllegalStateException.class);
        assertThat(thrown.get(1)).isInstanceOfSatisfying(CollectiveException.class,
                e -> assertThat(e.reason()).isEqualTo(CollectiveException.Reason.ABORTED));
    }
}
