package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.tp.RankGroups;
import io.mstar.worker.tp.ThreadRanks;

/**
 * A tensor-parallel lm rank whose group cannot complete a batch fails it with a typed error within the collective's
 * bound, never hangs, and leaves nothing allocated; a group whose size does not split the model, or a KV pool sized
 * for another group, is refused before any collective call.
 */
class TensorParallelLmFailureTests {

    private static final Duration SHORT = Duration.ofSeconds(1);
    private static final Duration LONG = Duration.ofSeconds(30);

    @RegisterExtension
    final RankGroups groups = new RankGroups();

    /** What rank 0's batch threw and how long it took. */
    private record Outcome(Throwable thrown, long millis) {
    }

    @Test
    void aRankWhosePeerNeverRunsTheBatchFailsWithTimeoutWithinTheBound() throws Exception {
        Outcome outcome = rankZeroRuns(SHORT, (c, peerDone) -> peerDone.await(60, TimeUnit.SECONDS));
        assertThat(outcome.thrown()).isInstanceOfSatisfying(CollectiveException.class,
                e -> assertThat(e.reason()).isEqualTo(CollectiveException.Reason.TIMEOUT));
        assertThat(outcome.millis()).as("failed within the bound (+5 s)").isLessThan(SHORT.toMillis() + 5_000);
    }

    @Test
    void aRankWhosePeerAbortsFailsAtOnce() throws Exception {
        Outcome outcome = rankZeroRuns(LONG, (c, peerDone) -> {
            Thread.sleep(100); // most likely while rank 0 waits in its first all-gather; before it is as good
            c.abort();
        });
        assertThat(outcome.thrown()).isInstanceOfSatisfying(CollectiveException.class,
                e -> assertThat(e.reason()).isEqualTo(CollectiveException.Reason.ABORTED));
        assertThat(outcome.millis()).as("long before the 30 s bound").isLessThan(10_000);
    }

    /** What rank 1 does instead of running the batch; {@code rankZeroDone} opens once rank 0 has failed. */
    @FunctionalInterface
    private interface Peer {
        void act(SharedMemoryCollective collective, CountDownLatch rankZeroDone) throws Exception;
    }

    /** A group of two where rank 0 runs a prefill batch and rank 1 does what {@code peer} does. */
    private Outcome rankZeroRuns(Duration timeout, Peer peer) throws Exception {
        ThreadRanks ranks = groups.of(2, timeout);
        CountDownLatch rankZeroDone = new CountDownLatch(1);
        List<Future<Outcome>> futures = ranks.start((c, device) -> {
            if (c.rank() == 1) {
                peer.act(c, rankZeroDone);
                return null;
            }
            try (TensorParallelLmBackend lm = new TensorParallelLmBackend(TensorParallelLmTests.WEIGHTS, c, device);
                    KvCache cache = new KvCache(device, new KvCacheConfig(16, 4), lm.bytesPerToken())) {
                long start = System.nanoTime();
                Throwable thrown = catchThrowable(() -> prefill(lm, device, cache));
                return new Outcome(thrown, (System.nanoTime() - start) / 1_000_000);
            } finally {
                rankZeroDone.countDown();
            }
        });
        ThreadRanks.valueOf(futures.get(1));
        return ThreadRanks.valueOf(futures.get(0));
    }

    private static void prefill(LmBackend lm, HostDevice device, KvCache cache) {
        cache.addRequest("r");
        int at = cache.appendTokens("r", 10);
        lm.run(device, cache.pool(), cache.layout(),
                List.of(new LmJob(new int[] {256, 72, 101, 108, 108, 111, 32, 116, 104, 101}, at, cache.pages("r"),
                        false)));
    }

    @Test
    void aGroupWhoseSizeDoesNotSplitTheModelIsRefused() throws Exception {
        ThreadRanks ranks = groups.of(3, LONG);
        List<Throwable> thrown = ranks.run((c, device) -> catchThrowable(
                () -> new TensorParallelLmBackend(TensorParallelLmTests.WEIGHTS, c, device)));
        assertThat(thrown).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tp_size 3"));
    }

    @Test
    void aKvPoolSizedForAnotherGroupIsRefusedBeforeAnyCollective() throws Exception {
        ThreadRanks ranks = groups.of(2, LONG);
        List<Throwable> thrown = ranks.run((c, device) -> {
            try (TensorParallelLmBackend lm = new TensorParallelLmBackend(TensorParallelLmTests.WEIGHTS, c, device);
                    KvCache cache = new KvCache(device, new KvCacheConfig(16, 4), ToyTtsWeights.BYTES_PER_TOKEN)) {
                assertThat(lm.bytesPerToken()).isEqualTo(ToyTtsWeights.bytesPerToken(2));
                return catchThrowable(() -> prefill(lm, device, cache));
            }
        });
        assertThat(thrown).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bytes per token"));
    }
}
