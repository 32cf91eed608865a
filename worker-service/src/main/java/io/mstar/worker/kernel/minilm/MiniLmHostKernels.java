package io.mstar.worker.kernel.minilm;

import java.util.stream.IntStream;

/**
 * The encoder's operations in plain Java over row-major float arrays: what runs on {@code HostDevice}, and the
 * twin every CUDA kernel of {@code minilm_kernels.cu} is tested against. Activations are token-major
 * {@code [batch * length, width]}; a {@link PaddedBatch}'s lengths say which rows are real.
 *
 * <p>The GEMM splits its rows over the common fork-join pool and joins before returning, so the caller's thread
 * (the engine loop) still sees one synchronous call.
 */
public final class MiniLmHostKernels {

    /** Rows per GEMM task: each weight row loaded from cache serves this many output rows. */
    private static final int ROW_BLOCK = 4;
    /** Reduction slice: the weight rows of one slice stay in L2 while a block of rows walks them. */
    private static final int K_BLOCK = 128;
    private static final double SQRT_HALF = Math.sqrt(0.5);

    private MiniLmHostKernels() {
    }

    /** {@code out[r] = word[ids[r]] + position[r % length] + tokenType} (before the embedding LayerNorm). */
    public static void embeddings(int[] ids, int rows, int length, int hidden, float[] word, float[] position,
            float[] tokenType, float[] out) {
        for (int r = 0; r < rows; r++) {
            int w = ids[r] * hidden;
            int p = (r % length) * hidden;
            int o = r * hidden;
            for (int c = 0; c < hidden; c++) {
                out[o + c] = word[w + c] + position[p + c] + tokenType[c];
            }
        }
    }

    /**
     * {@code out = a[m, k] * w[k, n] + bias}, then GELU (erf form) when {@code gelu}. {@code out} must not be
     * {@code a}.
     */
    public static void gemm(float[] a, float[] w, float[] bias, float[] out, int m, int n, int k, boolean gelu) {
        int blocks = (m + ROW_BLOCK - 1) / ROW_BLOCK;
        IntStream range = IntStream.range(0, blocks);
        if ((long) m * n * k > 1 << 20) {
            range = range.parallel();
        }
        range.forEach(block -> gemmRows(a, w, bias, out, block * ROW_BLOCK, Math.min(m, (block + 1) * ROW_BLOCK), n, k,
                gelu));
    }

    private static void gemmRows(float[] a, float[] w, float[] bias, float[] out, int r0, int r1, int n, int k,
            boolean gelu) {
        for (int r = r0; r < r1; r++) {
            System.arraycopy(bias, 0, out, r * n, n);
        }
        for (int k0 = 0; k0 < k; k0 += K_BLOCK) {
            int k1 = Math.min(k, k0 + K_BLOCK);
            if (r1 - r0 == ROW_BLOCK) {
                // four rows at once: each weight element loaded serves four multiply-adds
                int o0 = r0 * n, o1 = o0 + n, o2 = o1 + n, o3 = o2 + n;
                for (int kk = k0; kk < k1; kk++) {
                    float a0 = a[r0 * k + kk], a1 = a[(r0 + 1) * k + kk], a2 = a[(r0 + 2) * k + kk],
                            a3 = a[(r0 + 3) * k + kk];
                    int wr = kk * n;
                    for (int c = 0; c < n; c++) {
                        float wv = w[wr + c];
                        out[o0 + c] += a0 * wv;
                        out[o1 + c] += a1 * wv;
                        out[o2 + c] += a2 * wv;
                        out[o3 + c] += a3 * wv;
                    }
                }
                continue;
            }
            for (int r = r0; r < r1; r++) {
                int o = r * n;
                int ar = r * k;
                for (int kk = k0; kk < k1; kk++) {
                    float av = a[ar + kk];
                    int wr = kk * n;
                    for (int c = 0; c < n; c++) {
                        out[o + c] += av * w[wr + c];
                    }
                }
            }
        }
        if (gelu) {
            for (int i = r0 * n; i < r1 * n; i++) {
                out[i] = gelu(out[i]);
            }
        }
    }

    /** {@code x * Phi(x)} with the exact (erf) normal CDF, as BERT's {@code gelu}. */
    public static float gelu(float x) {
        return (float) (0.5 * x * (1 + erf(x * SQRT_HALF)));
    }

    /** erf to about 1e-7 absolute (Abramowitz–Stegun 7.1.26 on |x|, odd extension): below float32 resolution at 1. */
    static double erf(double x) {
        double ax = Math.abs(x);
        double t = 1 / (1 + 0.3275911 * ax);
        double y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592)
                * t * Math.exp(-ax * ax);
        return x < 0 ? -y : y;
    }

    /**
     * {@code out[r] = LayerNorm(x[r] + residual[r]) * gamma + beta} over rows of {@code width}; {@code residual} may
     * be null; {@code out} may be {@code x} or {@code residual}. Mean and variance in double.
     */
    public static void addLayerNorm(float[] x, float[] residual, float[] gamma, float[] beta, float[] out, int rows,
            int width, float eps) {
        float[] row = new float[width];
        for (int r = 0; r < rows; r++) {
            int o = r * width;
            double sum = 0;
            for (int c = 0; c < width; c++) {
                float v = residual == null ? x[o + c] : x[o + c] + residual[o + c];
                row[c] = v;
                sum += v;
            }
            double mean = sum / width;
            double var = 0;
            for (int c = 0; c < width; c++) {
                double d = row[c] - mean;
                var += d * d;
            }
            double inv = 1 / Math.sqrt(var / width + eps);
            for (int c = 0; c < width; c++) {
                out[o + c] = (float) ((row[c] - mean) * inv) * gamma[c] + beta[c];
            }
        }
    }

    /**
     * Multi-head self-attention: {@code qkv} is {@code [batch * length, 3 * hidden]} (query | key | value, each
     * split into {@code heads} slices of {@code hidden / heads}), {@code out} is {@code [batch * length, hidden]}.
     * Every row (padding rows too) attends to its sentence's real tokens only: softmax(q k^T / sqrt(d)) v.
     */
    public static void attention(float[] qkv, int[] lengths, int batch, int length, int heads, int headDim,
            float[] out) {
        int hidden = heads * headDim;
        int stride = 3 * hidden;
        float scale = (float) (1 / Math.sqrt(headDim));
        IntStream.range(0, batch * heads).parallel().forEach(bh -> {
            int b = bh / heads;
            int h = bh % heads;
            int len = lengths[b];
            float[] p = new float[len];
            float[] acc = new float[headDim];
            for (int i = 0; i < length; i++) {
                int q = (b * length + i) * stride + h * headDim;
                float max = Float.NEGATIVE_INFINITY;
                for (int j = 0; j < len; j++) {
                    int kk = (b * length + j) * stride + hidden + h * headDim;
                    float s = 0;
                    for (int d = 0; d < headDim; d++) {
                        s += qkv[q + d] * qkv[kk + d];
                    }
                    p[j] = s * scale;
                    max = Math.max(max, p[j]);
                }
                float sum = 0;
                for (int j = 0; j < len; j++) {
                    p[j] = (float) Math.exp(p[j] - max);
                    sum += p[j];
                }
                java.util.Arrays.fill(acc, 0);
                for (int j = 0; j < len; j++) {
                    int v = (b * length + j) * stride + 2 * hidden + h * headDim;
                    float pj = p[j];
                    for (int d = 0; d < headDim; d++) {
                        acc[d] += pj * qkv[v + d];
                    }
                }
                int o = (b * length + i) * hidden + h * headDim;
                float inv = 1 / sum;
                for (int d = 0; d < headDim; d++) {
                    out[o + d] = acc[d] * inv;
                }
            }
        });
    }

    /**
     * {@code out[b] = normalize(mean of hidden rows 0 .. lengths[b]-1 of sentence b)}: mean pooling under the
     * attention mask, then L2 normalisation (a zero vector stays zero).
     */
    public static void meanPoolNormalize(float[] hidden, int[] lengths, int batch, int length, int width,
            float[] out) {
        for (int b = 0; b < batch; b++) {
            double[] sum = new double[width];
            for (int i = 0; i < lengths[b]; i++) {
                int r = (b * length + i) * width;
                for (int c = 0; c < width; c++) {
                    sum[c] += hidden[r + c];
                }
            }
            double norm = 0;
            for (int c = 0; c < width; c++) {
                sum[c] /= lengths[b];
                norm += sum[c] * sum[c];
            }
            double inv = 1 / Math.max(Math.sqrt(norm), 1e-12);
            for (int c = 0; c < width; c++) {
                out[b * width + c] = (float) (sum[c] * inv);
            }
        }
    }
}
