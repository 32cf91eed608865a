package io.mstar.worker.kernel.minilm;

import java.util.Map;

import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.ModelKernels;

/** minilm-embed's kernels for a device: the CUDA encoder on a {@link CudaDevice} when this build has its PTX. */
public final class MiniLmKernels {

    private MiniLmKernels() {
    }

    /** The model's kernel set around {@code kernel}. */
    public static ModelKernels of(MiniLmNodeKernel kernel) {
        return new ModelKernels(MiniLmModel.NAME, Map.of(MiniLmModel.ENCODE, kernel));
    }

    /**
     * Loads the weights ({@link MiniLmWeights#fromSystemPropertyOrClasspath}) and the tokenizer and builds the
     * encoder for {@code device}: on a GPU with the PTX the CUDA encoder (weights uploaded now), else the Java one.
     */
    public static MiniLmNodeKernel load(Device device) {
        MiniLmWeights weights = MiniLmWeights.fromSystemPropertyOrClasspath();
        MiniLmTokenizer tokenizer = MiniLmTokenizer.fromClasspath();
        try {
            MiniLmEncoder encoder = device instanceof CudaDevice cuda && MiniLmCudaKernels.available()
                    ? new MiniLmCudaEncoder(new MiniLmCudaKernels(cuda), weights)
                    : new MiniLmHostEncoder(weights);
            return new MiniLmNodeKernel(tokenizer, encoder);
        } catch (RuntimeException e) {
            tokenizer.close();
            throw e;
        }
    }
}
