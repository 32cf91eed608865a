package io.mstar.worker.kernel.tts;

import io.mstar.model.ToyTtsModel;

/**
 * The toy-tts language model's geometry and its deterministic weights (docs/toy-tts.md): every parameter comes
 * from a SplitMix64 stream seeded with {@link #SEED}, so every worker, host or GPU, builds the same model without a
 * file. One flat {@code float[]} in a fixed order ({@link #offsets}), so the CUDA kernels get it in one copy and
 * index it with the same offsets.
 *
 * <p>Generator: value {@code i} of the stream is {@code (splitmix64(state += GOLDEN_GAMMA) >>> 40) / 2^24}, mapped
 * to {@code [-1, 1)}, times the tensor's scale: {@code 1/sqrt(fan_in)} for projections and the output head
 * ({@code [D, VOCAB]}, untied: a tied head mostly repeats the last token), 1 for the embedding; norm gains are
 * {@code 1 + 0.1 * u}. Wanted are not meaningful words but text-like bytes and a reachable EOS, so the output
 * layer adds a fixed per-byte prior ({@link #bytePrior}) and the kernel an EOS ramp.
 * Immutable after construction.
 */
public final class ToyTtsWeights {

    /** The generator seed; changing it changes every output of the model. */
    public static final long SEED = 0x7E57_5EEDL;
    public static final int D = 64;
    public static final int LAYERS = 2;
    public static final int HEADS = 4;
    public static final int HEAD_DIM = D / HEADS;
    public static final int FFN = 128;
    /**
     * The largest tp_size, one head per rank; the row-parallel projections sum their rows in this many blocks at every
     * tp_size, so that the group's floats are the reference's ({@link LmForward}).
     */
    public static final int MAX_TP = HEADS;
    public static final int VOCAB = ToyTtsModel.VOCAB;
    public static final float ROPE_THETA = 10000f;
    public static final float NORM_EPS = 1e-5f;
    /** Output-head logits are scaled so the model's preferences and the prior both matter. */
    public static final float LOGIT_SCALE = 3f;
    /** Every layer's K and V of one token, float32: what a KV page slot holds. */
    public static final long BYTES_PER_TOKEN = (long) LAYERS * 2 * D * Float.BYTES;

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    /** Offsets into {@link #values()} of every tensor, in floats. */
    public record Offsets(int embedding, int[] attnNorm, int[] wq, int[] wk, int[] wv, int[] wo, int[] mlpNorm,
            int[] w1, int[] w2, int finalNorm, int head, int bytePrior, int invFreq, int total) {
    }

    private final float[] values;
    private final Offsets offsets;

    private ToyTtsWeights(float[] values, Offsets offsets) {
        this.values = values;
        this.offsets = offsets;
    }

    /** The model's weights, generated from {@link #SEED}; a few milliseconds. */
    public static ToyTtsWeights generate() {
        Offsets o = layout();
        float[] w = new float[o.total()];
        long[] state = {SEED};
        fill(w, o.embedding(), VOCAB * D, 1f, 0f, state);
        for (int l = 0; l < LAYERS; l++) {
            fill(w, o.attnNorm()[l], D, 0.1f, 1f, state);
            float projection = (float) (1 / Math.sqrt(D));
            fill(w, o.wq()[l], D * D, projection, 0f, state);
            fill(w, o.wk()[l], D * D, projection, 0f, state);
            fill(w, o.wv()[l], D * D, projection, 0f, state);
            fill(w, o.wo()[l], D * D, projection, 0f, state);
            fill(w, o.mlpNorm()[l], D, 0.1f, 1f, state);
            fill(w, o.w1()[l], D * FFN, projection, 0f, state);
            fill(w, o.w2()[l], FFN * D, (float) (1 / Math.sqrt(FFN)), 0f, state);
        }
        fill(w, o.finalNorm(), D, 0.1f, 1f, state);
        fill(w, o.head(), D * VOCAB, (float) (1 / Math.sqrt(D)), 0f, state);
        for (int v = 0; v < VOCAB; v++) {
            w[o.bytePrior() + v] = bytePrior(v);
        }
        for (int i = 0; i < HEAD_DIM / 2; i++) {
            w[o.invFreq() + i] = (float) Math.pow(ROPE_THETA, -2.0 * i / HEAD_DIM);
        }
        return new ToyTtsWeights(w, o);
    }

    /** Where each tensor lives in the flat array. */
    public static Offsets layout() {
        return layout(1);
    }

    /**
     * Where each tensor of one tensor-parallel rank's shard ({@link LmShard}) lives in its flat array: the model's
     * order, with Wq, Wk, Wv and W1 {@code tpSize} times narrower and Wo and W2 {@code tpSize} times shorter;
     * {@code tpSize} 1 is the whole model's layout.
     */
    public static Offsets layout(int tpSize) {
        checkTpSize(tpSize);
        int dims = D / tpSize;
        int ffn = FFN / tpSize;
        int at = 0;
        int embedding = at;
        at += VOCAB * D;
        int[] attnNorm = new int[LAYERS];
        int[] wq = new int[LAYERS];
        int[] wk = new int[LAYERS];
        int[] wv = new int[LAYERS];
        int[] wo = new int[LAYERS];
        int[] mlpNorm = new int[LAYERS];
        int[] w1 = new int[LAYERS];
        int[] w2 = new int[LAYERS];
        for (int l = 0; l < LAYERS; l++) {
            attnNorm[l] = at;
            at += D;
            wq[l] = at;
            at += D * dims;
            wk[l] = at;
            at += D * dims;
            wv[l] = at;
            at += D * dims;
            wo[l] = at;
            at += dims * D;
            mlpNorm[l] = at;
            at += D;
            w1[l] = at;
            at += D * ffn;
            w2[l] = at;
            at += ffn * D;
        }
        int finalNorm = at;
        at += D;
        int head = at;
        at += D * VOCAB;
        int bytePrior = at;
        at += VOCAB;
        int invFreq = at;
        at += HEAD_DIM / 2;
        return new Offsets(embedding, attnNorm, wq, wk, wv, wo, mlpNorm, w1, w2, finalNorm, head, bytePrior, invFreq, at);
    }

    /**
     * What one KV slot holds on a rank of a tensor-parallel group of {@code tpSize}: every layer's K and V of the
     * rank's own heads, {@code LAYERS * 2 * (D / tpSize)} floats ({@link #BYTES_PER_TOKEN} for {@code tpSize} 1).
     */
    public static long bytesPerToken(int tpSize) {
        checkTpSize(tpSize);
        return (long) LAYERS * 2 * (D / tpSize) * Float.BYTES;
    }

    /**
     * Checks that the lm splits evenly over {@code tpSize} ranks: whole heads per rank and equal slices of the MLP.
     *
     * @throws IllegalArgumentException naming tp_size otherwise
     */
    public static void checkTpSize(int tpSize) {
        if (tpSize < 1 || HEADS % tpSize != 0 || FFN % tpSize != 0 || D % tpSize != 0) {
            throw new IllegalArgumentException("tp_size " + tpSize + " does not split the toy-tts lm: it must divide"
                    + " its " + HEADS + " heads, " + FFN + " MLP columns and " + D + " model dims");
        }
    }

    /**
     * A fixed bias per output id making the toy's text look like text: letters and space favoured, other printable
     * ASCII neutral, control and high bytes unlikely; BOS is never produced (-infinity); EOS starts neutral (the
     * kernel's ramp makes it likely as generation goes on).
     */
    static float bytePrior(int v) {
        if (v == ToyTtsModel.BOS) {
            return Float.NEGATIVE_INFINITY;
        }
        if (v == ToyTtsModel.EOS) {
            return 0f;
        }
        if (v == ' ' || (v >= 'a' && v <= 'z')) {
            return 2.5f;
        }
        if (v >= 'A' && v <= 'Z' || v == '.' || v == ',') {
            return 1f;
        }
        if (v >= 0x21 && v <= 0x7E) {
            return 0f;
        }
        return -6f;
    }

    private static void fill(float[] w, int from, int n, float scale, float shift, long[] state) {
        for (int i = 0; i < n; i++) {
            state[0] += GOLDEN_GAMMA;
            long z = state[0];
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z = z ^ (z >>> 31);
            float u = (z >>> 40) / (float) (1 << 24) * 2f - 1f;
            w[from + i] = shift + scale * u;
        }
    }

    /** The flat parameters; callers must not modify them. */
    public float[] values() {
        return values;
    }

    public Offsets offsets() {
        return offsets;
    }
}
