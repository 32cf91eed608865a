package io.mstar.worker.kernel.tts;

import static io.mstar.worker.kernel.tts.ToyTtsWeights.D;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.FFN;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.HEADS;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.HEAD_DIM;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.LAYERS;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.VOCAB;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * The toy-tts transformer in plain Java: the reference the CUDA kernels are compared with. Per job it copies the
 * request's earlier K/V out of the pool page by page (one contiguous copy per page), runs the fed tokens one after
 * the other (each attends to everything before it and to itself), and writes each new token's K/V back into its
 * slot. Works on any {@link Device} through its copies. Single-threaded scratch: owned by the engine loop.
 *
 * <p>Per token at position {@code p}, per layer: {@code h = rmsnorm(x) * g}; {@code q,k,v = h Wq, h Wk, h Wv};
 * RoPE on q and k (pairs {@code (2i, 2i+1)} of each head, angle {@code p * theta^(-2i/head_dim)}); causal softmax
 * attention per head over the cache; {@code x += o Wo}; {@code x += silu(rmsnorm(x) W1) W2}. Logits:
 * {@code LOGIT_SCALE * (rmsnorm(x) Head)[v] + prior[v]}.
 */
public final class HostLmBackend implements LmBackend {

    private final float[] w;
    private final ToyTtsWeights.Offsets o;

    public HostLmBackend(ToyTtsWeights weights) {
        this.w = weights.values();
        this.o = weights.offsets();
    }

    @Override
    public float[][] run(Device device, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs) {
        float[][] logits = new float[jobs.size()][];
        for (int j = 0; j < jobs.size(); j++) {
            logits[j] = runOne(device, pool, layout, jobs.get(j));
        }
        return logits;
    }

    private float[] runOne(Device device, DeviceBuffer pool, KvCacheLayout layout, LmJob job) {
        int seq = job.sequenceLength();
        int pageSize = layout.pageSize();
        int stride = (int) (layout.bytesPerToken() / Float.BYTES);
        // kv[position * stride + (layer * 2 + {0 K, 1 V}) * D + i], the slot layout of the pool
        float[] kv = new float[seq * stride];
        int known = job.firstPosition();
        for (int page = 0; page * pageSize < known; page++) {
            int tokens = Math.min(pageSize, known - page * pageSize);
            ByteBuffer bytes = ByteBuffer.allocateDirect((int) (tokens * layout.bytesPerToken()))
                    .order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(pool, job.pages()[page] * layout.pageBytes(), bytes);
            bytes.asFloatBuffer().get(kv, page * pageSize * stride, tokens * stride);
        }
        float[] x = new float[D];
        for (int t = 0; t < job.tokens().length; t++) {
            token(job.tokens()[t], job.firstPosition() + t, kv, stride, x);
        }
        ByteBuffer slot = ByteBuffer.allocateDirect((int) layout.bytesPerToken()).order(ByteOrder.LITTLE_ENDIAN);
        FloatBuffer slotFloats = slot.asFloatBuffer();
        for (int p = job.firstPosition(); p < seq; p++) {
            slotFloats.clear();
            slotFloats.put(kv, p * stride, stride);
            long offset = layout.byteOffset(job.pages()[p / pageSize], p % pageSize);
            device.copyFromHost(slot, pool, offset);
        }
        return job.wantLogits() ? logits(x) : null;
    }

    /** Runs one token through every layer, leaving the residual stream in {@code x}. */
    private void token(int token, int pos, float[] kv, int stride, float[] x) {
        System.arraycopy(w, o.embedding() + token * D, x, 0, D);
        float[] h = new float[D];
        float[] q = new float[D];
        float[] att = new float[D];
        float[] u = new float[FFN];
        float[] scores = new float[pos + 1];
        float scale = (float) (1 / Math.sqrt(HEAD_DIM));
        for (int l = 0; l < LAYERS; l++) {
            rmsnorm(x, o.attnNorm()[l], h);
            int kAt = pos * stride + (l * 2) * D;
            int vAt = kAt + D;
            matvec(h, D, o.wq()[l], D, q, 0);
            matvec(h, D, o.wk()[l], D, kv, kAt);
            matvec(h, D, o.wv()[l], D, kv, vAt);
            rope(q, 0, pos);
            rope(kv, kAt, pos);
            for (int head = 0; head < HEADS; head++) {
                int hOff = head * HEAD_DIM;
                float max = Float.NEGATIVE_INFINITY;
                for (int j = 0; j <= pos; j++) {
                    int kj = j * stride + (l * 2) * D + hOff;
                    float s = 0f;
                    for (int i = 0; i < HEAD_DIM; i++) {
                        s += q[hOff + i] * kv[kj + i];
                    }
                    s *= scale;
                    scores[j] = s;
                    max = Math.max(max, s);
                }
                float sum = 0f;
                for (int j = 0; j <= pos; j++) {
                    scores[j] = (float) StrictMath.exp(scores[j] - max);
                    sum += scores[j];
                }
                for (int i = 0; i < HEAD_DIM; i++) {
                    float acc = 0f;
                    for (int j = 0; j <= pos; j++) {
                        acc += scores[j] * kv[j * stride + (l * 2 + 1) * D + hOff + i];
                    }
                    att[hOff + i] = acc / sum;
                }
            }
            addMatvec(att, D, o.wo()[l], D, x);
            rmsnorm(x, o.mlpNorm()[l], h);
            matvec(h, D, o.w1()[l], FFN, u, 0);
            for (int i = 0; i < FFN; i++) {
                u[i] = u[i] / (1f + (float) StrictMath.exp(-u[i]));
            }
            addMatvec(u, FFN, o.w2()[l], D, x);
        }
    }

    /** Logits after the residual stream {@code x}. */
    float[] logits(float[] x) {
        float[] h = new float[D];
        rmsnorm(x, o.finalNorm(), h);
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

    private void rmsnorm(float[] x, int gain, float[] out) {
        float ss = 0f;
        for (int i = 0; i < D; i++) {
            ss += x[i] * x[i];
        }
        float inv = (float) (1 / Math.sqrt(ss / D + ToyTtsWeights.NORM_EPS));
        for (int i = 0; i < D; i++) {
            out[i] = x[i] * inv * w[gain + i];
        }
    }

    /** {@code out[outAt + c] = sum_r in[r] * W[r * cols + c]}. */
    private void matvec(float[] in, int rows, int matrix, int cols, float[] out, int outAt) {
        for (int c = 0; c < cols; c++) {
            float s = 0f;
            for (int r = 0; r < rows; r++) {
                s += in[r] * w[matrix + r * cols + c];
            }
            out[outAt + c] = s;
        }
    }

    private void addMatvec(float[] in, int rows, int matrix, int cols, float[] acc) {
        for (int c = 0; c < cols; c++) {
            float s = 0f;
            for (int r = 0; r < rows; r++) {
                s += in[r] * w[matrix + r * cols + c];
            }
            acc[c] += s;
        }
    }

    private void rope(float[] v, int at, int pos) {
        for (int head = 0; head < HEADS; head++) {
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
