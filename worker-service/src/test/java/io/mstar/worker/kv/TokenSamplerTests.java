package io.mstar.worker.kv;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import io.mstar.request.SamplingConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class TokenSamplerTests {

    private static final int DRAWS = 40_000;
    /** About five standard deviations of a frequency near 0.5 over {@link #DRAWS} draws. */
    private static final double TOLERANCE = 0.0125;

    private final TokenSampler sampler = new TokenSampler();

    private static SamplingConfig config(double temperature, int topK, double topP) {
        return new SamplingConfig(null, temperature, topK, topP, false, 1.0, 0);
    }

    private static float[] logitsOf(double... probabilities) {
        float[] logits = new float[probabilities.length];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) Math.log(probabilities[i]);
        }
        return logits;
    }

    private double[] frequencies(float[] logits, SamplingConfig config, long seed) {
        double[] counts = new double[logits.length];
        for (int step = 0; step < DRAWS; step++) {
            counts[sampler.sample(logits, config, seed, step)]++;
        }
        for (int i = 0; i < counts.length; i++) {
            counts[i] /= DRAWS;
        }
        return counts;
    }

    @Test
    void temperatureZeroIsArgmaxWithTiesToTheLowerId() {
        float[] logits = {0.1f, 3f, -2f, 3f};
        for (long step = 0; step < 50; step++) {
            assertThat(sampler.sample(logits, config(0, 0, 1), step * 31, step)).isEqualTo(1);
        }
        assertThat(sampler.sample(new float[] {Float.NEGATIVE_INFINITY, -5f}, config(0, 0, 1), 0, 0)).isEqualTo(1);
    }

    @Test
    void theSameSeedAndStepAlwaysDrawTheSameTokenAndOtherSeedsDiffer() {
        SplittableRandom random = new SplittableRandom(11);
        float[] logits = new float[1000];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) random.nextGaussian();
        }
        SamplingConfig config = config(1.0, 50, 0.9);
        int[] first = new int[64];
        int[] again = new int[64];
        int[] otherSeed = new int[64];
        for (int step = 0; step < 64; step++) {
            first[step] = sampler.sample(logits, config, 1234, step);
        }
        TokenSampler fresh = new TokenSampler();
        for (int step = 63; step >= 0; step--) {
            again[step] = fresh.sample(logits, config, 1234, step);
            otherSeed[step] = fresh.sample(logits, config, 1235, step);
        }
        assertThat(again).as("independent of call order and instance").isEqualTo(first);
        assertThat(otherSeed).isNotEqualTo(first);
        Set<Integer> distinct = new HashSet<>();
        for (int token : first) {
            distinct.add(token);
        }
        assertThat(distinct.size()).as("steps draw different tokens").isGreaterThan(10);
    }

    @Test
    void drawsFollowTheSoftmaxOfTheLogits() {
        double[] f = frequencies(logitsOf(0.5, 0.3, 0.2), config(1.0, 0, 1.0), 7);
        assertThat(f[0]).isCloseTo(0.5, within(TOLERANCE));
        assertThat(f[1]).isCloseTo(0.3, within(TOLERANCE));
        assertThat(f[2]).isCloseTo(0.2, within(TOLERANCE));
    }

    @Test
    void temperatureSharpensTheDistribution() {
        double[] f = frequencies(logitsOf(0.5, 0.3, 0.2), config(0.5, 0, 1.0), 8);
        double z = 0.25 + 0.09 + 0.04;
        assertThat(f[0]).isCloseTo(0.25 / z, within(TOLERANCE));
        assertThat(f[1]).isCloseTo(0.09 / z, within(TOLERANCE));
        assertThat(f[2]).isCloseTo(0.04 / z, within(TOLERANCE));
    }

    @Test
    void topKKeepsOnlyTheMostLikelyTokens() {
        double[] f = frequencies(logitsOf(0.3, 0.5, 0.2), config(1.0, 2, 1.0), 9);
        assertThat(f[2]).isZero();
        assertThat(f[1]).isCloseTo(0.625, within(TOLERANCE));
        assertThat(f[0]).isCloseTo(0.375, within(TOLERANCE));
    }

    @Test
    void topPKeepsTheSmallestPrefixReachingTheThreshold() {
        float[] logits = logitsOf(0.2, 0.5, 0.3);
        double[] f = frequencies(logits, config(1.0, 0, 0.6), 10);
        assertThat(f[0]).isZero();
        assertThat(f[1]).isCloseTo(0.625, within(TOLERANCE));
        assertThat(f[2]).isCloseTo(0.375, within(TOLERANCE));
        double[] only = frequencies(logits, config(1.0, 0, 0.5), 11);
        assertThat(only[1]).isEqualTo(1.0);
    }

    @Test
    void vocabSizeAndRowOffsetLimitTheCandidates() {
        float[] batch = {9f, 9f, 0f, 0f, 0f, 9f};
        SamplingConfig limited = new SamplingConfig(2, 1.0, 0, 1.0, false, 1.0, 0);
        for (int step = 0; step < 200; step++) {
            int token = sampler.sample(batch, 2, 4, limited, 5, step);
            assertThat(token).isBetween(0, 1);
        }
        assertThat(sampler.sample(batch, 3, 3, config(0, 0, 1), 0, 0)).isEqualTo(2);
    }

    @Test
    void badLogitsAndSettingsAreTypedErrors() {
        assertThatThrownBy(() -> sampler.sample(new float[] {1f, Float.NaN}, config(1, 0, 1), 0, 0))
                .isInstanceOfSatisfying(KvCacheException.class,
                        e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.INVALID_LOGITS));
        assertThatThrownBy(() -> sampler.sample(new float[] {Float.NEGATIVE_INFINITY}, config(0, 0, 1), 0, 0))
                .isInstanceOfSatisfying(KvCacheException.class,
                        e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.INVALID_LOGITS));
        assertThatThrownBy(() -> sampler.sample(new float[] {1f}, config(-1, 0, 1), 0, 0))
                .isInstanceOfSatisfying(KvCacheException.class,
                        e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.INVALID_ARGUMENT));
        assertThatThrownBy(() -> sampler.sample(new float[] {1f}, config(1, 0, 0), 0, 0))
                .isInstanceOf(KvCacheException.class);
        assertThatThrownBy(() -> sampler.sample(new float[] {1f}, config(1, -1, 1), 0, 0))
                .isInstanceOf(KvCacheException.class);
    }

    @Test
    void uniformNumbersAreSpreadOverTheUnitInterval() {
        int[] buckets = new int[10];
        for (long step = 0; step < 100_000; step++) {
            double u = TokenSampler.uniform(42, step);
            assertThat(u).isGreaterThanOrEqualTo(0).isLessThan(1);
            buckets[(int) (u * 10)]++;
        }
        for (int count : buckets) {
            assertThat(count).isBetween(9_500, 10_500);
        }
    }

    @Test
    void repetitionPenaltyMakesSeenTokensLessLikelyOnce() {
        float[] row = {9f, 2f, -2f, 1f, 4f};
        TokenSampler.applyRepetitionPenalty(row, 1, 4, new int[] {0, 1, 1, 7, -1}, 2.0);
        assertThat(row).containsExactly(9f, 1f, -4f, 1f, 4f);
        TokenSampler.applyRepetitionPenalty(row, 1, 4, new int[] {0, 1}, 1.0);
        assertThat(row).containsExactly(9f, 1f, -4f, 1f, 4f);
        assertThatThrownBy(() -> TokenSampler.applyRepetitionPenalty(row, 0, 5, new int[] {0}, 0))
                .isInstanceOfSatisfying(KvCacheException.class,
                        e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.INVALID_ARGUMENT));
        float[] greedy = {3f, 2.5f};
        TokenSampler.applyRepetitionPenalty(greedy, 0, 2, new int[] {0}, 1.5);
        assertThat(sampler.sample(greedy, config(0, 0, 1), 0, 0)).as("3/1.5 = 2 < 2.5").isEqualTo(1);
    }
}
