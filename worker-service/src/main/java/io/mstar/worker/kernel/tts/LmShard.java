package io.mstar.worker.kernel.tts;

import static io.mstar.worker.kernel.tts.ToyTtsWeights.D;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.FFN;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.HEADS;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.HEAD_DIM;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.LAYERS;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.VOCAB;

/**
 * One tensor-parallel rank's part of the toy-tts weights, Megatron-style (docs/toy-tts.md#tensor-parallelism): the
 * Wq/Wk/Wv columns and the Wo rows of its {@code HEADS / tpSize} heads, the W1 columns and W2 rows of its
 * {@code FFN / tpSize} slice of the MLP; the embedding, norms, output head, prior and RoPE frequencies whole. One flat
 * array in {@link ToyTtsWeights#layout(int)}; with {@code tpSize} 1 it is the weights' own array. Immutable.
 *
 * @param values   the shard's parameters; callers must not modify them
 * @param offsets  where each tensor lives in {@code values}
 * @param heads    the rank's heads
 * @param dims     the rank's share of the model dims: its heads' Q/K/V width, {@code heads * HEAD_DIM}
 * @param ffn      the rank's MLP columns
 * @param block    the first of the rank's consecutive blocks of the {@link ToyTtsWeights#MAX_TP} that the rows of Wo
 *                 and W2 are summed in ({@link LmForward})
 */
public record LmShard(float[] values, ToyTtsWeights.Offsets offsets, int heads, int dims, int ffn, int block) {

    /** The whole model, as one rank: the reference's weights, not copied. */
    public static LmShard whole(ToyTtsWeights weights) {
        return new LmShard(weights.values(), weights.offsets(), HEADS, D, FFN, 0);
    }

    /**
     * Rank {@code rank}'s shard of a group of {@code tpSize}: heads {@code [rank * heads, (rank + 1) * heads)} and MLP
     * columns {@code [rank * ffn, (rank + 1) * ffn)}.
     *
     * @throws IllegalArgumentException when {@code tpSize} does not split the model or {@code rank} is not in it
     */
    public static LmShard of(ToyTtsWeights weights, int rank, int tpSize) {
        ToyTtsWeights.checkTpSize(tpSize);
        if (rank < 0 || rank >= tpSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in a group of tp_size " + tpSize);
        }
        if (tpSize == 1) {
            return whole(weights);
        }
        int dims = D / tpSize;
        int ffn = FFN / tpSize;
        int col = rank * dims;
        int mlpCol = rank * ffn;
        float[] w = weights.values();
        ToyTtsWeights.Offsets from = weights.offsets();
        ToyTtsWeights.Offsets to = ToyTtsWeights.layout(tpSize);
        float[] s = new float[to.total()];
        copy(w, from.embedding(), VOCAB * D, s, to.embedding());
        for (int l = 0; l < LAYERS; l++) {
            copy(w, from.attnNorm()[l], D, s, to.attnNorm()[l]);
            columns(w, from.wq()[l], D, D, col, dims, s, to.wq()[l]);
            columns(w, from.wk()[l], D, D, col, dims, s, to.wk()[l]);
            columns(w, from.wv()[l], D, D, col, dims, s, to.wv()[l]);
            // rows of a row-major matrix are one block
            copy(w, from.wo()[l] + col * D, dims * D, s, to.wo()[l]);
            copy(w, from.mlpNorm()[l], D, s, to.mlpNorm()[l]);
            columns(w, from.w1()[l], D, FFN, mlpCol, ffn, s, to.w1()[l]);
            copy(w, from.w2()[l] + mlpCol * D, ffn * D, s, to.w2()[l]);
        }
        copy(w, from.finalNorm(), D, s, to.finalNorm());
        copy(w, from.head(), D * VOCAB, s, to.head());
        copy(w, from.bytePrior(), VOCAB, s, to.bytePrior());
        copy(w, from.invFreq(), HEAD_DIM / 2, s, to.invFreq());
        return new LmShard(s, to, HEADS / tpSize, dims, ffn, rank * ToyTtsWeights.MAX_TP / tpSize);
    }

    /** Floats of one KV slot: every layer's K and V of the shard's heads. */
    public int slotFloats() {
        return LAYERS * 2 * dims;
    }

    /** How many of the {@link ToyTtsWeights#MAX_TP} row blocks of Wo and W2 the rank holds. */
    public int blocks() {
        return ToyTtsWeights.MAX_TP * dims / D;
    }

    private static void copy(float[] from, int at, int n, float[] to, int toAt) {
        System.arraycopy(from, at, to, toAt, n);
    }

    /** Columns {@code [first, first + n)} of a row-major {@code [rows, cols]} matrix, as a {@code [rows, n]} one. */
    private static void columns(float[] from, int at, int rows, int cols, int first, int n, float[] to, int toAt) {
        for (int r = 0; r < rows; r++) {
            System.arraycopy(from, at + r * cols + first, to, toAt + r * n, n);
        }
    }
}
