package io.mstar.worker.kernel.tts;

import static io.mstar.worker.kernel.tts.ToyTtsWeights.D;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.FFN;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.HEAD_DIM;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.LAYERS;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.MAX_TP;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.VOCAB;

import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * The toy-tts transformer's math on one {@link LmShard}, shared by the reference ({@link HostLmBackend}, the whole
 * model) and each rank of a tensor-parallel group ({@link TensorParallelLmBackend}). It runs a batch layer by layer:
 * for every fed token of every job, its heads' attention, then the sublayer's output projection of every token as
 * block partials, one {@link BlockGather#gather} (an all-gather on a group, nothing on one rank), their sum and the
 * residual add; the same for the MLP. A token attends to the earlier positions of its own job, all of which the layer
 * has computed before it, so this order gives each token exactly the values of running the tokens one after the other.
 *
 * <p>One summation order at every tp_size: the rows of Wo and of W2 are cut into {@link ToyTtsWeights#MAX_TP} fixed
 * blocks (a head's rows of Wo, {@code FFN / MAX_TP} rows of W2); each block's partial vector sums its rows in order,
 * and the partials are added {@code ((b0 + b1) + b2) + b3}, on one worker and on every rank alike. So the reference
 * and every tensor-parallel group compute bit-identical logits. Single-threaded scratch: one owner at a time.
 */
final class LmForward {

    /**
     * Gives every rank all {@code MAX_TP} block partials of a sublayer, in place: {@code blocks} holds them block
     * after block, and each rank has filled in its own ({@link LmShard#block()} on), floats
     * {@code [rank * floatsPerRank, (rank + 1) * floatsPerRank)}.
     */
    @FunctionalInterface
    interface BlockGather {
        /** On one rank every block is its own already. */
        BlockGather WHOLE = (blocks, floatsPerRank) -> { };

        void gather(float[] blocks, int floatsPerRank);
    }

    private final float[] w;
    private final ToyTtsWeights.Offsets o;
    private final LmShard shard;

    LmForward(LmShard shard) {
        this.shard = shard;
        this.w = shard.values();
        this.o = shard.offsets();
    }

    /** {@link LmBackend#run}, with {@code gather} sharing the row-parallel projections' block partials. */
    float[][] run(Device device, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs, BlockGather gather) {
        long slotBytes = (long) shard.slotFloats() * Float.BYTES;
        if (layout.bytesPerToken() != slotBytes) {
            throw new IllegalArgumentException("the KV pool holds " + layout.bytesPerToken() + " bytes per token; this"
                    + " lm keeps " + slotBytes + " (ToyTtsWeights.bytesPerToken(tp_size))");
        }
        LmJobKv[] kv = new LmJobKv[jobs.size()];
        int rows = 0;
        int maxPositions = 0;
        for (int j = 0; j < jobs.size(); j++) {
            kv[j] = LmJobKv.load(device, pool, layout, jobs.get(j));
            rows += jobs.get(j).tokens().length;
            maxPositions = Math.max(maxPositions, jobs.get(j).sequenceLength());
        }
        // x[row * D ..]: the residual stream of each fed token, rows in job order then token order
        float[] x = new float[rows * D];
        // blocks[(b * rows + row) * D ..]: block b's partial of each token, so each rank's blocks are one range
        float[] blocks = new float[MAX_TP * rows * D];
        int floatsPerRank = shard.blocks() * rows * D;
        Scratch s = new Scratch(shard, maxPositions);
        int row = 0;
        for (LmJob job : jobs) {
            for (int token : job.tokens()) {
                System.arraycopy(w, o.embedding() + token * D, x, row++ * D, D);
            }
        }
        // no tokens, no collectives: every rank has the same jobs, so every rank skips them alike
        for (int l = 0; l < LAYERS && rows > 0; l++) {
            row = 0;
            for (int j = 0; j < jobs.size(); j++) {
                for (int t = 0; t < jobs.get(j).tokens().length; t++, row++) {
                    attention(l, kv[j], jobs.get(j).firstPosition() + t, x, row * D, blocks, rows * D, s);
                }
            }
            gather.gather(blocks, floatsPerRank);
            add(blocks, x, rows * D);
            for (row = 0; row < rows; row++) {
                mlp(l, x, row * D, blocks, rows * D, s);
            }
            gather.gather(blocks, floatsPerRank);
            add(blocks, x, rows * D);
        }
        float[][] logits = new float[jobs.size()][];
        row = 0;
        for (int j = 0; j < jobs.size(); j++) {
            kv[j].store(device, pool, layout);
            row += jobs.get(j).tokens().length;
            logits[j] = jobs.get(j).wantLogits() ? logits(x, (row - 1) * D) : null;
        }
        return logits;
    }

    /** Per-token buffers, sized once per batch. */
    private static final class Scratch {
        final float[] h = new float[D];
        final float[] q;
        final float[] att;
        final float[] u;
        final float[] scores;

        Scratch(LmShard shard, int maxPositions) {
            q = new float[shard.dims()];
            att = new float[shard.dims()];
            u = new float[shard.ffn()];
            scores = new float[maxPositions];
        }
    }

    /**
     * The token at {@code pos} (residual at {@code x[xAt]}): its Q, its K and V into its slot, RoPE, causal softmax
     * attention of each of the shard's heads over the job's cache, and the block partials of those heads' rows of Wo
     * into {@code blocks} ({@link #project}).
     */
    private void attention(int l, LmJobKv kv, int pos, float[] x, int xAt, float[] blocks, int blockFloats,
            Scratch s) {
        int dims = shard.dims();
        float[] cache = kv.values;
        int stride = kv.stride;
        float scale = (float) (1 / Math.sqrt(HEAD_DIM));
        rmsnorm(x, xAt, o.attnNorm()[l], s.h);
        int kAt = pos * stride + (l * 2) * dims;
        int vAt = kAt + dims;
        matvec(s.h, 0, D, o.wq()[l], dims, s.q, 0);
        matvec(s.h, 0, D, o.wk()[l], dims, cache, kAt);
        matvec(s.h, 0, D, o.wv()[l], dims, cache, vAt);
        rope(s.q, 0, pos);
        rope(cache, kAt, pos);
        for (int head = 0; head < shard.heads(); head++) {
            int hOff = head * HEAD_DIM;
            float max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j <= pos; j++) {
                int kj = j * stride + (l * 2) * dims + hOff;
                float score = 0f;
                for (int i = 0; i < HEAD_DIM; i++) {
                    score += s.q[hOff + i] * cache[kj + i];
                }
                score *= scale;
                s.scores[j] = score;
                max = Math.max(max, score);
            }
            float sum = 0f;
            for (int j = 0; j <= pos; j++) {
                s.scores[j] = (float) StrictMath.exp(s.scores[j] - max);
                sum += s.scores[j];
            }
            for (int i = 0; i < HEAD_DIM; i++) {
                float acc = 0f;
                for (int j = 0; j <= pos; j++) {
                    acc += s.scores[j] * cache[j * stride + (l * 2 + 1) * dims + hOff + i];
                }
                s.att[hOff + i] = acc / sum;
            }
        }
        project(s.att, D / MAX_TP, o.wo()[l], blocks, xAt, blockFloats);
    }

    /** The MLP of the residual at {@code x[xAt]}: the shard's W1 columns, SiLU, its W2 rows' block partials. */
    private void mlp(int l, float[] x, int xAt, float[] blocks, int blockFloats, Scratch s) {
        int ffn = shard.ffn();
        rmsnorm(x, xAt, o.mlpNorm()[l], s.h);
        matvec(s.h, 0, D, o.w1()[l], ffn, s.u, 0);
        for (int i = 0; i < ffn; i++) {
            s.u[i] = s.u[i] / (1f + (float) StrictMath.exp(-s.u[i]));
        }
        project(s.u, FFN / MAX_TP, o.w2()[l], blocks, xAt, blockFloats);
    }

    /**
     * The partial of each of the shard's row blocks of a row-parallel {@code [rows, D]} matrix, {@code blockRows}
     * rows each: block {@code b}'s into {@code blocks[b * blockFloats + xAt]}.
     */
    private void project(float[] in, int blockRows, int matrix, float[] blocks, int xAt, int blockFloats) {
        for (int b = 0; b < shard.blocks(); b++) {
            matvec(in, b * blockRows, blockRows, matrix + b * blockRows * D, D, blocks,
                    (shard.block() + b) * blockFloats + xAt);
        }
    }

    /** Logits after the residual at {@code x[xAt]}. */
    private float[] logits(float[] x, int xAt) {
        float[] h = new float[D];
        rmsnorm(x, xAt, o.finalNorm(), h);
        float[] logits = new float[VOCAB];
        for (int v = 0; v < VOCAB; v++) {
            float s = 0f;
            for (int i = 0; i < D; i++) {
                s += h[i] * w[o.head() + i * VOCAB + v];
            }
            logits[v] = ToyTtsWeights.LOGIT_SCALE * s + w[o.bytePrior() + v];
        }
        return logits;
    }

    /** {@code x += ((b0 + b1) + b2) + b3}: the blocks' partials in the one order of every tp_size. */
    private static void add(float[] blocks, float[] x, int n) {
        for (int i = 0; i < n; i++) {
            float sum = blocks[i];
            for (int b = 1; b < MAX_TP; b++) {
                sum += blocks[b * n + i];
            }
            x[i] += sum;
        }
    }

    private void rmsnorm(float[] x, int xAt, int gain, float[] out) {
        float ss = 0f;
        for (int i = 0; i < D; i++) {
            ss += x[xAt + i] * x[xAt + i];
        }
        float inv = (float) (1 / Math.sqrt(ss / D + ToyTtsWeights.NORM_EPS));
        for (int i = 0; i < D; i++) {
            out[i] = x[xAt + i] * inv * w[gain + i];
        }
    }

    /** {@code out[outAt + c] = sum_r in[inAt + r] * W[r * cols + c]}, rows in order. */
    private void matvec(float[] in, int inAt, int rows, int matrix, int cols, float[] out, int outAt) {
        for (int c = 0; c < cols; c++) {
            float s = 0f;
            for (int r = 0; r < rows; r++) {
                s += in[inAt + r] * w[matrix + r * cols + c];
            }
            out[outAt + c] = s;
        }
    }

    /** RoPE on the shard's heads of a Q or K vector at {@code v[at]}. */
    private void rope(float[] v, int at, int pos) {
        for (int head = 0; head < shard.heads(); head++) {
            for (int i = 0; i < HEAD_DIM / 2; i++) {
                float angle = pos * w[o.invFreq() + i];
                float c = (float) StrictMath.cos(angle);
                float s = (float) StrictMath.sin(angle);
                int a = at + head * HEAD_DIM + 2 * i;
                float x0 = v[a];
                float x1 = v[a + 1];
                v[a] = x0 * c - x1 * s;
                v[a + 1] = x0 * s + x1 * c;
            }
        }
    }
}
