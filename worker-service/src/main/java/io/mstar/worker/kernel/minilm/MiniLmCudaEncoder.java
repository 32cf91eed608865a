package io.mstar.worker.kernel.minilm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.CudaGraph;
import io.mstar.tensor.device.cuda.GemmPrecision;

/**
 * The encoder on a GPU (docs/minilm-embed.md#on-a-gpu): weights on the device from construction to {@link #close()},
 * working buffers kept from batch to batch and grown when a larger batch comes. Each {@link #encode} uploads the
 * ids, runs the {@link MiniLmCudaKernels} in stream order (the linear layers on cuBLAS) and copies the pooled
 * embeddings back, which waits for the work.
 *
 * <p>With {@link MiniLmCudaSettings#graphs()} a batch is padded to a power-of-two number of sentences and a
 * power-of-two length (at least {@value #MIN_LENGTH}, at most the model's positions), and the whole forward pass for
 * that shape is captured once as a {@link CudaGraph} and replayed after: one launch instead of some 50. Padding
 * costs arithmetic on rows nobody reads; it buys replays. Growing the working buffers drops every graph, since
 * graphs hold buffer addresses. Owned by the engine thread that runs minilm's node.
 */
public final class MiniLmCudaEncoder implements MiniLmEncoder {

    static final int MIN_LENGTH = 16;

    private final MiniLmCudaKernels kernels;
    private final CudaDevice device;
    private final MiniLmConfig config;
    private final MiniLmCudaSettings settings;
    private final MiniLmCudaWeights weights;
    private final Map<Long, CudaGraph> graphs = new HashMap<>();
    private MiniLmCudaActivations activations;
    private boolean closed;

    public MiniLmCudaEncoder(MiniLmCudaKernels kernels, MiniLmWeights weights) {
        this(kernels, weights, MiniLmCudaSettings.defaults());
    }

    public MiniLmCudaEncoder(MiniLmCudaKernels kernels, MiniLmWeights weights, MiniLmCudaSettings settings) {
        if (settings.precision() != GemmPrecision.FP32 && !kernels.usesCublas()) {
            throw new IllegalArgumentException("minilm precision " + settings.precision()
                    + " needs cuBLAS, which does not load here; use fp32");
        }
        this.kernels = kernels;
        this.device = kernels.device();
        this.config = weights.config();
        this.settings = settings;
        this.weights = new MiniLmCudaWeights(device, weights, settings.precision());
    }

    @Override
    public MiniLmConfig config() {
        return config;
    }

    /** Replays of captured graphs since construction (0 with graphs off). */
    public long graphLaunches() {
        return graphs.values().stream().mapToLong(CudaGraph::launches).sum();
    }

    /** Graphs captured and still held. */
    public int graphsCaptured() {
        return graphs.size();
    }

    @Override
    public float[][] encode(List<int[]> sentences) {
        MiniLmEncoder.check(config, sentences);
        if (closed) {
            throw new IllegalStateException("encoder is closed");
        }
        if (sentences.isEmpty()) {
            return new float[0][];
        }
        PaddedBatch batch = settings.graphs()
                ? PaddedBatch.of(sentences, ceilPowerOfTwo(sentences.size()), paddedLength(sentences))
                : PaddedBatch.of(sentences);
        MiniLmCudaActivations a = activationsFor(batch);
        device.copyFromHost(ints(batch.ids()), a.ids, 0);
        device.copyFromHost(ints(batch.lengths()), a.lengths, 0);
        if (settings.graphs()) {
            long key = (long) batch.batch() << 32 | batch.length();
            graphs.computeIfAbsent(key, k -> device.capture(() -> forward(a, batch.batch(), batch.length()))).launch();
        } else {
            forward(a, batch.batch(), batch.length());
        }
        int h = config.hidden();
        int n = sentences.size();
        ByteBuffer host = ByteBuffer.allocateDirect(n * h * 4).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(a.pooled, 0, host);
        float[] pooled = new float[n * h];
        host.asFloatBuffer().get(pooled);
        float[][] out = new float[n][];
        for (int b = 0; b < n; b++) {
            out[b] = Arrays.copyOfRange(pooled, b * h, (b + 1) * h);
        }
        return out;
    }

    private void forward(MiniLmCudaActivations a, int batch, int length) {
        int rows = batch * length;
        int h = config.hidden();
        int inter = config.intermediate();
        float eps = config.eps();
        GemmPrecision p = settings.precision();
        boolean half = p == GemmPrecision.BF16;
        kernels.embeddings(a.ids, rows, length, h, weights.word, weights.position, weights.tokenType, a.x);
        kernels.addLayerNorm(a.x, null, weights.embNormGamma, weights.embNormBeta, a.x, rows, h, eps, a.x16);
        for (MiniLmCudaWeights.Layer l : weights.layers) {
            kernels.linear(p, half ? a.x16 : a.x, l.qkvWeight(), l.qkvBias(), a.qkv, rows, 3 * h, h, false, null);
            kernels.attention(a.qkv, a.lengths, batch, length, config.heads(), config.headDim(), a.ctx, a.ctx16);
            kernels.linear(p, half ? a.ctx16 : a.ctx, l.attnOutWeight(), l.attnOutBias(), a.tmp, rows, h, h, false,
                    null);
            kernels.addLayerNorm(a.tmp, a.x, l.attnNormGamma(), l.attnNormBeta(), a.x, rows, h, eps, a.x16);
            kernels.linear(p, half ? a.x16 : a.x, l.upWeight(), l.upBias(), a.up, rows, inter, h, true, a.up16);
            kernels.linear(p, half ? a.up16 : a.up, l.downWeight(), l.downBias(), a.tmp, rows, h, inter, false, null);
            kernels.addLayerNorm(a.tmp, a.x, l.outNormGamma(), l.outNormBeta(), a.x, rows, h, eps, a.x16);
        }
        kernels.meanPoolNormalize(a.x, a.lengths, batch, length, h, a.pooled);
    }

    /** The working buffers for {@code batch}, grown (and every graph dropped) when it does not fit. */
    private MiniLmCudaActivations activationsFor(PaddedBatch batch) {
        if (activations != null && activations.fits(batch.batch(), batch.rows())) {
            return activations;
        }
        int batches = batch.batch();
        int rows = batch.rows();
        if (activations != null) {
            batches = Math.max(batches, activations.batch);
            rows = Math.max(rows, activations.rows);
            dropActivations();
        }
        activations = new MiniLmCudaActivations(device, config, batches, rows, settings.precision() == GemmPrecision.BF16);
        return activations;
    }

    private void dropActivations() {
        // replays already issued still read these buffers: the stream orders the frees' reuse after them
        graphs.values().forEach(CudaGraph::close);
        graphs.clear();
        activations.close();
        activations = null;
    }

    private int paddedLength(List<int[]> sentences) {
        int longest = 0;
        for (int[] s : sentences) {
            longest = Math.max(longest, s.length);
        }
        return Math.min(config.maxPositions(), ceilPowerOfTwo(Math.max(MIN_LENGTH, longest)));
    }

    private static int ceilPowerOfTwo(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }

    private static ByteBuffer ints(int[] values) {
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        return b;
    }

    /** Frees the graphs, the working buffers and the weights; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (activations != null) {
            dropActivations();
        }
        weights.close();
    }
}
