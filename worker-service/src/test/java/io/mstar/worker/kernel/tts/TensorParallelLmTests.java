package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.tp.TensorParallelSampling;
import io.mstar.worker.tp.RankGroups;
import io.mstar.worker.tp.ThreadRanks;

/**
 * The lm on a tensor-parallel group of 2 and 4 ranks (threads, each with its own device, KV cache and collective on
 * one file) against the reference on one worker, driven in lockstep through the same prompts and steps: on every
 * rank the reference's tokens at every step, greedy and sampled (rank 0 draws and broadcasts), and the reference's
 * logit bits, as every tp_size sums the row-parallel projections in one order ({@link LmForward}). Failures:
 * {@link TensorParallelLmFailureTests}.
 */
class TensorParallelLmTests {

    static final ToyTtsWeights WEIGHTS = ToyTtsWeights.generate();
    static final SamplingConfig GREEDY = new SamplingConfig(null, 0, 0, 1, true, 1, 0);
    static final SamplingConfig SAMPLED = new SamplingConfig(null, 0.8, 40, 0.95, true, 1, 0);
    private static final int PROMPTS = 8;
    private static final int PAGE = 16;

    @RegisterExtension
    final RankGroups groups = new RankGroups();

    @Test
    void twoRanksDecodeGreedilyTheReferencesTokensWithItsLogits() throws Exception {
        agree("greedy", GREEDY, 2);
    }

    @Test
    void twoRanksSampleTheReferencesTokensWithItsLogits() throws Exception {
        agree("sampled", SAMPLED, 2);
    }

    @Test
    void fourRanksDecodeGreedilyTheReferencesTokensWithItsLogits() throws Exception {
        agree("fourRanks", GREEDY, 4);
    }

    /** 8 prompts of 1 to 24 random bytes, each request with a seed of its own. */
    static LockstepDecode decode(long seed, SamplingConfig sampling, int steps) {
        Random random = new Random(seed);
        int[][] prompts = new int[PROMPTS][];
        long[] seeds = new long[PROMPTS];
        for (int i = 0; i < PROMPTS; i++) {
            prompts[i] = random.ints(1 + random.nextInt(24), 0, ToyTtsModel.BYTES).toArray();
            seeds[i] = random.nextLong();
        }
        return new LockstepDecode(prompts, sampling, seeds, steps);
    }

    /** Enough pages for every request's prompt and steps. */
    static KvCacheConfig cacheFor(LockstepDecode decode) {
        return new KvCacheConfig(PAGE, PROMPTS * ((24 + decode.steps()) / PAGE + 1));
    }

    /**
     * Runs the reference and a group of {@code size} on a seeded decode of 256 steps and checks that every rank has
     * the reference's tokens and logit bits at every step.
     */
    private void agree(String test, SamplingConfig sampling, int size) throws Exception {
        LockstepDecode decode = decode(Seeds.of("TensorParallelLmTests." + test), sampling, 256);
        LockstepDecode.Trace one;
        try (HostDevice device = new HostDevice("host", 64L << 20)) {
            try (KvCache cache = new KvCache(device, cacheFor(decode), ToyTtsWeights.BYTES_PER_TOKEN)) {
                one = decode.run(new HostLmBackend(WEIGHTS), device, cache, LockstepDecode::drawHere);
            }
            assertThat(device.stats().liveBuffers()).isZero();
        }
        ThreadRanks ranks = groups.of(size, Duration.ofSeconds(30));
        List<LockstepDecode.Trace> group = ranks.run((c, device) -> rank(c, device, decode));
        for (int r = 0; r < size; r++) {
            for (int s = 0; s < decode.steps(); s++) {
                assertThat(group.get(r).tokens()[s]).as("step %d: tokens of rank %d", s, r)
                        .containsExactly(one.tokens()[s]);
                for (int j = 0; j < PROMPTS; j++) {
                    assertThat(bits(group.get(r).logits()[s][j])).as("step %d, request %d: rank %d's logit bits", s,
                            j, r).containsExactly(bits(one.logits()[s][j]));
                }
            }
        }
    }

    private static LockstepDecode.Trace rank(SharedMemoryCollective c, HostDevice device, LockstepDecode decode) {
        TensorParallelSampling sampling = new TensorParallelSampling(c, device);
        try (TensorParallelLmBackend lm = new TensorParallelLmBackend(WEIGHTS, c, device);
                KvCache cache = new KvCache(device, cacheFor(decode), lm.bytesPerToken())) {
            return decode.run(lm, device, cache, (logits, steps, generated) -> sampling.sample(logits,
                    (j, row) -> ToyTtsLmKernel.draw(steps.get(j), generated, row)));
        }
    }

    static int[] bits(float[] values) {
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float.floatToRawIntBits(values[i]);
        }
        return bits;
    }

    @Test
    void aRanksKvSlotHoldsOnlyItsHeads() {
        assertThat(ToyTtsWeights.bytesPerToken(1)).isEqualTo(ToyTtsWeights.BYTES_PER_TOKEN);
        assertThat(ToyTtsWeights.bytesPerToken(2)).isEqualTo(ToyTtsWeights.BYTES_PER_TOKEN / 2);
        assertThat(ToyTtsWeights.bytesPerToken(4)).isEqualTo(ToyTtsWeights.BYTES_PER_TOKEN / 4);
        for (int tp : new int[] {0, 3, 8}) {
            assertThatThrownBy(() -> ToyTtsWeights.bytesPerToken(tp)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("tp_size " + tp);
        }
    }
}
