package io.mstar.worker.kernel.minilm;

import java.util.ArrayList;
import java.util.List;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.GemmPrecision;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.worker.kernel.OwnedBuffers;

/**
 * minilm's weights on a GPU, about 90 MB in FP32: the linear layers' matrices in the products' precision (BF16
 * halves them), everything else (embeddings, biases, LayerNorm) in FP32.
 */
final class MiniLmCudaWeights implements AutoCloseable {

    record Layer(DeviceBuffer qkvWeight, DeviceBuffer qkvBias, DeviceBuffer attnOutWeight, DeviceBuffer attnOutBias,
            DeviceBuffer attnNormGamma, DeviceBuffer attnNormBeta, DeviceBuffer upWeight, DeviceBuffer upBias,
            DeviceBuffer downWeight, DeviceBuffer downBias, DeviceBuffer outNormGamma, DeviceBuffer outNormBeta) {
    }

    final DeviceBuffer word;
    final DeviceBuffer position;
    final DeviceBuffer tokenType;
    final DeviceBuffer embNormGamma;
    final DeviceBuffer embNormBeta;
    final List<Layer> layers = new ArrayList<>();
    private final CudaDevice device;
    private final GemmPrecision precision;
    private final OwnedBuffers owned;

    MiniLmCudaWeights(CudaDevice device, MiniLmWeights weights, GemmPrecision precision) {
        this.device = device;
        this.precision = precision;
        this.owned = new OwnedBuffers(device);
        try {
            word = upload(weights.wordEmbeddings());
            position = upload(weights.positionEmbeddings());
            tokenType = upload(weights.tokenTypeEmbedding());
            embNormGamma = upload(weights.embeddingNormGamma());
            embNormBeta = upload(weights.embeddingNormBeta());
            for (MiniLmWeights.Layer l : weights.layers()) {
                layers.add(new Layer(matrix(l.qkvWeight()), upload(l.qkvBias()), matrix(l.attnOutWeight()),
                        upload(l.attnOutBias()), upload(l.attnNormGamma()), upload(l.attnNormBeta()),
                        matrix(l.upWeight()), upload(l.upBias()), matrix(l.downWeight()), upload(l.downBias()),
                        upload(l.outNormGamma()), upload(l.outNormBeta())));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private DeviceBuffer matrix(float[] values) {
        if (precision != GemmPrecision.BF16) {
            return upload(values);
        }
        short[] halves = new short[values.length];
        for (int i = 0; i < values.length; i++) {
            halves[i] = GemmPrecision.bf16(values[i]);
        }
        return owned.own(DeviceUploads.shorts(device, halves));
    }

    private DeviceBuffer upload(float[] values) {
        return owned.own(DeviceUploads.floats(device, values));
    }

    /** Frees every buffer once; idempotent. */
    @Override
    public void close() {
        owned.close();
    }
}
