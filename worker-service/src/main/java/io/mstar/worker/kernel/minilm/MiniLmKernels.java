package io.mstar.worker.kernel.minilm;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.ModelKernels;

/** minilm-embed's kernels for a device: the CUDA encoder on a {@link CudaDevice} when this build has its PTX. */
public final class MiniLmKernels {

    private static final Logger log = LoggerFactory.getLogger(MiniLmKernels.class);

    private MiniLmKernels() {
    }

    /** The model's kernel set around {@code kernel}. */
    public static ModelKernels of(MiniLmNodeKernel kernel) {
        return new ModelKernels(MiniLmModel.NAME, Map.of(MiniLmModel.ENCODE, kernel));
    }

    /**
     * The kernel for {@code device}, its weights ({@link MiniLmWeights#fromSystemPropertyOrClasspath}) and tokenizer
     * read on a thread of their own so the worker's start-up does not wait (the first minilm batch does, once). The
     * encoder is built at that first batch on the engine thread: on a GPU with the PTX the CUDA encoder (the weights
     * uploaded then), else the Java one.
     */
    public static MiniLmNodeKernel load(Device device, MiniLmCudaSettings cudaSettings) {
        CompletableFuture<MiniLmNodeKernel.Loaded> loading = new CompletableFuture<>();
        Thread loader = new Thread(() -> {
            long start = System.nanoTime();
            try {
                MiniLmWeights weights = MiniLmWeights.fromSystemPropertyOrClasspath();
                loading.complete(new MiniLmNodeKernel.Loaded(weights, MiniLmTokenizer.fromClasspath()));
                log.info("{}: weights and tokenizer loaded in {} ms", MiniLmModel.NAME,
                        (System.nanoTime() - start) / 1_000_000);
            } catch (Throwable e) {
                log.error("{}: loading failed; its requests will fail", MiniLmModel.NAME, e);
                loading.completeExceptionally(e);
            }
        }, "mstar-minilm-loader");
        loader.setDaemon(true);
        loader.start();
        return new MiniLmNodeKernel(loading, weights -> encoderFor(device, weights, cudaSettings));
    }

    /** The CUDA encoder on a {@link CudaDevice} when this build has the PTX, else the Java one. */
    public static MiniLmEncoder encoderFor(Device device, MiniLmWeights weights, MiniLmCudaSettings cudaSettings) {
        return device instanceof CudaDevice cuda && MiniLmCudaKernels.available()
                ? new MiniLmCudaEncoder(new MiniLmCudaKernels(cuda), weights, cudaSettings)
                : new MiniLmHostEncoder(weights);
    }
}
