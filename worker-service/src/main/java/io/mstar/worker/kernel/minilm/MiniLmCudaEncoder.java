package io.mstar.worker.kernel.minilm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.DeviceUploads;

/**
 * The encoder on a GPU: the weights live on the device from construction to {@link #close()} (about 90 MB for
 * all-MiniLM-L6-v2); each {@link #encode} allocates its activations, runs the {@link MiniLmCudaKernels} in stream
 * order, copies the pooled embeddings back (which waits for the work) and frees the activations, also when a
 * launch fails.
 */
public final class MiniLmCudaEncoder implements MiniLmEncoder {

    private record LayerBuffers(DeviceBuffer qkvWeight, DeviceBuffer qkvBias, DeviceBuffer attnOutWeight,
            DeviceBuffer attnOutBias, DeviceBuffer attnNormGamma, DeviceBuffer attnNormBeta, DeviceBuffer upWeight,
            DeviceBuffer upBias, DeviceBuffer downWeight, DeviceBuffer downBias, DeviceBuffer outNormGamma,
            DeviceBuffer outNormBeta) {
    }

    private final MiniLmCudaKernels kernels;
    private final CudaDevice device;
    private final MiniLmConfig config;
    private final List<DeviceBuffer> owned = new ArrayList<>();
    private final DeviceBuffer word;
    private final DeviceBuffer position;
    private final DeviceBuffer tokenType;
    private final DeviceBuffer embNormGamma;
    private final DeviceBuffer embNormBeta;
    private final List<LayerBuffers> layers = new ArrayList<>();
    private boolean closed;

    public MiniLmCudaEncoder(MiniLmCudaKernels kernels, MiniLmWeights weights) {
        this.kernels = kernels;
        this.device = kernels.device();
        this.config = weights.config();
        try {
            word = upload(weights.wordEmbeddings());
            position = upload(weights.positionEmbeddings());
            tokenType = upload(weights.tokenTypeEmbedding());
            embNormGamma = upload(weights.embeddingNormGamma());
            embNormBeta = upload(weights.embeddingNormBeta());
            for (MiniLmWeights.Layer l : weights.layers()) {
                layers.add(new LayerBuffers(upload(l.qkvWeight()), upload(l.qkvBias()), upload(l.attnOutWeight()),
                        upload(l.attnOutBias()), upload(l.attnNormGamma()), upload(l.attnNormBeta()),
                        upload(l.upWeight()), upload(l.upBias()), upload(l.downWeight()), upload(l.downBias()),
                        upload(l.outNormGamma()), upload(l.outNormBeta())));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public MiniLmConfig config() {
        return config;
    }

    @Override
    public float[][] encode(List<int[]> sentences) {
        MiniLmEncoder.check(config, sentences);
        if (sentences.isEmpty()) {
            return new float[0][];
        }
        PaddedBatch batch = PaddedBatch.of(sentences);
        float[] pooled = new float[batch.batch() * config.hidden()];
        List<DeviceBuffer> scratch = new ArrayList<>();
        try {
            forward(batch, scratch, pooled);
        } finally {
            for (DeviceBuffer b : scratch) {
                device.free(b);
            }
        }
        int h = config.hidden();
        float[][] out = new float[batch.batch()][];
        for (int b = 0; b < out.length; b++) {
            out[b] = java.util.Arrays.copyOfRange(pooled, b * h, (b + 1) * h);
        }
        return out;
    }

    private void forward(PaddedBatch batch, List<DeviceBuffer> scratch, float[] pooledOut) {
        int rows = batch.rows();
        int h = config.hidden();
        DeviceBuffer ids = track(scratch, DeviceUploads.ints(device, batch.ids()));
        DeviceBuffer lengths = track(scratch, DeviceUploads.ints(device, batch.lengths()));
        DeviceBuffer x = track(scratch, device.allocate(4L * rows * h));
        DeviceBuffer qkv = track(scratch, device.allocate(4L * rows * 3 * h));
        DeviceBuffer ctx = track(scratch, device.allocate(4L * rows * h));
        DeviceBuffer tmp = track(scratch, device.allocate(4L * rows * h));
        DeviceBuffer up = track(scratch, device.allocate(4L * rows * config.intermediate()));
        DeviceBuffer pooled = track(scratch, device.allocate(4L * batch.batch() * h));
        kernels.embeddings(ids, rows, batch.length(), h, word, position, tokenType, x);
        kernels.addLayerNorm(x, null, embNormGamma, embNormBeta, x, rows, h, config.eps());
        for (LayerBuffers l : layers) {
            kernels.gemm(x, l.qkvWeight(), l.qkvBias(), qkv, rows, 3 * h, h, false);
            kernels.attention(qkv, lengths, batch.batch(), batch.length(), config.heads(), config.headDim(), ctx);
            kernels.gemm(ctx, l.attnOutWeight(), l.attnOutBias(), tmp, rows, h, h, false);
            kernels.addLayerNorm(tmp, x, l.attnNormGamma(), l.attnNormBeta(), x, rows, h, config.eps());
            kernels.gemm(x, l.upWeight(), l.upBias(), up, rows, config.intermediate(), h, true);
            kernels.gemm(up, l.downWeight(), l.downBias(), tmp, rows, h, config.intermediate(), false);
            kernels.addLayerNorm(tmp, x, l.outNormGamma(), l.outNormBeta(), x, rows, h, config.eps());
        }
        kernels.meanPoolNormalize(x, lengths, batch.batch(), batch.length(), h, pooled);
        ByteBuffer host = ByteBuffer.allocateDirect(pooledOut.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(pooled, 0, host);
        host.asFloatBuffer().get(pooledOut);
    }

    private static DeviceBuffer track(List<DeviceBuffer> scratch, DeviceBuffer b) {
        scratch.add(b);
        return b;
    }

    private DeviceBuffer upload(float[] values) {
        DeviceBuffer b = DeviceUploads.floats(device, values);
        owned.add(b);
        return b;
    }



    /** Frees the weights; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (DeviceBuffer b : owned) {
            device.free(b);
        }
        owned.clear();
    }
}
