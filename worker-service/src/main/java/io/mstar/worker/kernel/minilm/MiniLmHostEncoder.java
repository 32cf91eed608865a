package io.mstar.worker.kernel.minilm;

import java.util.List;

/**
 * The encoder in Java on host memory ({@link MiniLmHostKernels}); holds nothing that needs freeing. No worker runs it
 * any more (a host worker runs {@link MiniLmOnnxEncoder}, 25-40 times faster): it stays as the readable reference the
 * CUDA encoder is tested against, whole here and op by op in {@link MiniLmHostKernels} (its GPU tests), itself
 * checked against ONNX Runtime on the golden set, and as the Java baseline of the {@code MiniLmThroughput} benchmark.
 */
public final class MiniLmHostEncoder implements MiniLmEncoder {

    private final MiniLmWeights weights;

    public MiniLmHostEncoder(MiniLmWeights weights) {
        this.weights = weights;
    }

    @Override
    public MiniLmConfig config() {
        return weights.config();
    }

    @Override
    public float[][] encode(List<int[]> sentences) {
        MiniLmEncoder.check(config(), sentences);
        if (sentences.isEmpty()) {
            return new float[0][];
        }
        PaddedBatch batch = PaddedBatch.of(sentences);
        float[] pooled = new float[batch.batch() * config().hidden()];
        forward(weights, batch, pooled);
        float[][] out = new float[batch.batch()][];
        int h = config().hidden();
        for (int b = 0; b < out.length; b++) {
            out[b] = java.util.Arrays.copyOfRange(pooled, b * h, (b + 1) * h);
        }
        return out;
    }

    /** The whole forward pass: {@code pooled} gets {@code [batch, hidden]} normalised embeddings. */
    static void forward(MiniLmWeights w, PaddedBatch batch, float[] pooled) {
        MiniLmConfig c = w.config();
        int rows = batch.rows();
        int h = c.hidden();
        float[] x = new float[rows * h];
        float[] qkv = new float[rows * 3 * h];
        float[] ctx = new float[rows * h];
        float[] tmp = new float[rows * h];
        float[] up = new float[rows * c.intermediate()];
        MiniLmHostKernels.embeddings(batch.ids(), rows, batch.length(), h, w.wordEmbeddings(), w.positionEmbeddings(),
                w.tokenTypeEmbedding(), x);
        MiniLmHostKernels.addLayerNorm(x, null, w.embeddingNormGamma(), w.embeddingNormBeta(), x, rows, h, c.eps());
        for (MiniLmWeights.Layer l : w.layers()) {
            MiniLmHostKernels.gemm(x, l.qkvWeight(), l.qkvBias(), qkv, rows, 3 * h, h, false);
            MiniLmHostKernels.attention(qkv, batch.lengths(), batch.batch(), batch.length(), c.heads(), c.headDim(), ctx);
            MiniLmHostKernels.gemm(ctx, l.attnOutWeight(), l.attnOutBias(), tmp, rows, h, h, false);
            MiniLmHostKernels.addLayerNorm(tmp, x, l.attnNormGamma(), l.attnNormBeta(), x, rows, h, c.eps());
            MiniLmHostKernels.gemm(x, l.upWeight(), l.upBias(), up, rows, c.intermediate(), h, true);
            MiniLmHostKernels.gemm(up, l.downWeight(), l.downBias(), tmp, rows, h, c.intermediate(), false);
            MiniLmHostKernels.addLayerNorm(tmp, x, l.outNormGamma(), l.outNormBeta(), x, rows, h, c.eps());
        }
        MiniLmHostKernels.meanPoolNormalize(x, batch.lengths(), batch.batch(), batch.length(), h, pooled);
    }

    @Override
    public void close() {
    }
}
