package io.mstar.worker.kv;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Objects;

import io.mstar.request.SamplingConfig;

import static io.mstar.worker.kv.KvCacheException.Reason.INVALID_ARGUMENT;
import static io.mstar.worker.kv.KvCacheException.Reason.INVALID_LOGITS;

/**
 * Picks the next token from one request's float logits: the argmax when the temperature is 0, otherwise a draw
 * from {@code softmax(logits / temperature)} restricted to the {@code top_k} most likely tokens and then to the
 * smallest most-likely prefix whose probability reaches {@code top_p} (top-k before top-p, as the reference's
 * fused kernel does). {@code vocab_size}, when set and smaller, limits the candidates to the first tokens.
 *
 * <p>Each draw uses one uniform number that is a pure function of {@code (seed, step)}: the request's seed
 * (the conductor's per-pass seed) and the step within the pass. The same request therefore samples the same
 * tokens whatever it was batched with and whichever worker ran it, and no RNG state is kept per request.
 * Ties break towards the lower token id in both modes.
 *
 * <p>{@code repetition_penalty} needs the request's generated tokens, which the engine holds: it applies
 * {@link #applyRepetitionPenalty} to the row before sampling.
 *
 * <p>Owned by the engine loop: its scratch arrays are reused across calls, so it is not thread-safe; one
 * instance per engine.
 */
public final class TokenSampler {

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private long[] order = new long[0];

    /** Samples over the whole array. */
    public int sample(float[] logits, SamplingConfig config, long seed, long step) {
        return sample(logits, 0, logits.length, config, seed, step);
    }

    /**
     * Samples over {@code logits[offset, offset + length)} (one row of a batch's logits).
     *
     * @return a token id in {@code [0, min(length, vocab_size))}
     * @throws KvCacheException INVALID_LOGITS for a NaN or +infinity logit or no finite candidate;
     *                          INVALID_ARGUMENT for a setting outside its range
     */
    public int sample(float[] logits, int offset, int length, SamplingConfig config, long seed, long step) {
        Objects.checkFromIndexSize(offset, length, logits.length);
        int n = checkSettings(config, length);
        double temperature = config.temperature();
        int argmax = -1;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            float v = logits[offset + i];
            if (Float.isNaN(v) || v == Float.POSITIVE_INFINITY) {
                throw new KvCacheException(INVALID_LOGITS, null, "logit " + i + " is " + v);
            }
            if (v > max) {
                max = v;
                argmax = i;
            }
        }
        if (argmax < 0) {
            throw new KvCacheException(INVALID_LOGITS, null, "every logit is -infinity");
        }
        if (temperature == 0) {
            return argmax;
        }
        double u = uniform(seed, step);
        double invT = 1.0 / temperature;
        boolean restricted = (config.topK() > 0 && config.topK() < n) || config.topP() < 1;
        if (!restricted) {
            return drawInIdOrder(logits, offset, n, max, invT, u);
        }
        return drawRestricted(logits, offset, n, max, invT, u, config.topK(), config.topP());
    }

    /**
     * Checks {@code config} for a row of {@code length} logits, as {@link #sample} does before drawing.
     *
     * @return the candidates: {@code min(length, vocab_size)}
     * @throws KvCacheException INVALID_ARGUMENT for a setting outside its range
     */
    public static int checkSettings(SamplingConfig config, int length) {
        Objects.requireNonNull(config, "config");
        int n = config.vocabSize() == null ? length : Math.min(length, config.vocabSize());
        double temperature = config.temperature();
        if (!(temperature >= 0) || config.topK() < 0 || !(config.topP() > 0 && config.topP() <= 1) || n < 1) {
            throw new KvCacheException(INVALID_ARGUMENT, null, "cannot sample with temperature=" + temperature
                    + " top_k=" + config.topK() + " top_p=" + config.topP() + " over " + n + " token(s)");
        }
        return n;
    }

    /**
     * Penalizes every token in {@code seenTokens} in place, as the reference does: a positive logit is divided by
     * {@code penalty}, a negative one multiplied, so a penalty above 1 always makes a seen token less likely.
     * A penalty of 1 changes nothing; a token listed twice is penalized once; ids outside the row are ignored
     * (a vocabulary wider than this head's).
     */
    public static void applyRepetitionPenalty(float[] logits, int offset, int length, int[] seenTokens,
                                              double penalty) {
        Objects.checkFromIndexSize(offset, length, logits.length);
        if (!(penalty > 0)) {
            throw new KvCacheException(INVALID_ARGUMENT, null, "repetition_penalty must be > 0: " + penalty);
        }
        if (penalty == 1) {
            return;
        }
        BitSet done = new BitSet(length);
        for (int token : seenTokens) {
            if (token < 0 || token >= length || done.get(token)) {
                continue;
            }
            done.set(token);
            float v = logits[offset + token];
            logits[offset + token] = (float) (v > 0 ? v / penalty : v * penalty);
        }
    }

    /** The uniform number in {@code [0, 1)} the draw at {@code (seed, step)} uses (SplitMix64 finalizer). */
    static double uniform(long seed, long step) {
        long z = seed + (step + 1) * GOLDEN_GAMMA;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        return (z >>> 11) * 0x1.0p-53;
    }

    private static int drawInIdOrder(float[] logits, int offset, int n, float max, double invT, double u) {
        double total = 0;
        for (int i = 0; i < n; i++) {
            total += weight(logits[offset + i], max, invT);
        }
        double target = u * total;
        double cumulative = 0;
        int lastCandidate = -1;
        for (int i = 0; i < n; i++) {
            double w = weight(logits[offset + i], max, invT);
            if (w > 0) {
                cumulative += w;
                lastCandidate = i;
                if (cumulative > target) {
                    return i;
                }
            }
        }
        // Rounding left the target at the very top of the mass.
        return lastCandidate;
    }

    private int drawRestricted(float[] logits, int offset, int n, float max, double invT, double u,
                               int topK, double topP) {
        if (order.length < n) {
            order = new long[n];
        }
        int m = 0;
        for (int i = 0; i < n; i++) {
            float v = logits[offset + i];
            if (v != Float.NEGATIVE_INFINITY) {
                // High half sorts by descending logit, low half by ascending id: one primitive sort, no boxing.
                order[m++] = ((long) ~sortable(v) << 32) | i;
            }
        }
        Arrays.sort(order, 0, m);
        int kept = topK > 0 ? Math.min(topK, m) : m;
        double total = 0;
        for (int j = 0; j < kept; j++) {
            total += weight(logits[offset + id(order[j])], max, invT);
        }
        if (topP < 1) {
            double threshold = topP * total;
            double cumulative = 0;
            int prefix = 0;
            while (prefix < kept) {
                cumulative += weight(logits[offset + id(order[prefix])], max, invT);
                prefix++;
                if (cumulative >= threshold) {
                    break;
                }
            }
            kept = prefix;
            total = cumulative;
        }
        double target = u * total;
        double cumulative = 0;
        for (int j = 0; j < kept; j++) {
            cumulative += weight(logits[offset + id(order[j])], max, invT);
            if (cumulative > target) {
                return id(order[j]);
            }
        }
        return id(order[kept - 1]);
    }

    private static double weight(float logit, float max, double invT) {
        return Math.exp((logit - (double) max) * invT);
    }

    private static int id(long key) {
        return (int) key;
    }

    /** An int whose signed order is the float's order (no NaN reaches here). */
    private static int sortable(float v) {
        int bits = Float.floatToIntBits(v);
        return bits ^ ((bits >> 31) & 0x7FFFFFFF);
    }
}
