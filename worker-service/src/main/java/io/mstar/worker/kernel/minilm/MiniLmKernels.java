package io.mstar.worker.kernel.minilm;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.ModelKernels;

/**
 * minilm-embed's kernels for a device: the CUDA encoder on a {@link CudaDevice} when this build has its PTX, ONNX
 * Runtime's ({@link MiniLmOnnxEncoder}) everywhere else.
 */
public final class MiniLmKernels {

    private static final Logger log = LoggerFactory.getLogger(MiniLmKernels.class);

    private MiniLmKernels() {
    }

    /** The model's kernel set around {@code kernel}. */
    public static ModelKernels of(MiniLmNodeKernel kernel) {
        return new ModelKernels(MiniLmModel.NAME, Map.of(MiniLmModel.ENCODE, kernel));
    }

    /**
     * The kernel for {@code device}, its model and tokenizer read on a thread of their own so the worker's start-up
     * does not wait (the first minilm batch does, once): on a GPU with the PTX the weights, which the CUDA encoder
     * uploads at that first batch on the engine thread; elsewhere the ONNX Runtime encoder, session and all.
     */
    public static MiniLmNodeKernel load(Device device, MiniLmCudaSettings cudaSettings) {
        if (device instanceof CudaDevice cuda && MiniLmCudaKernels.available()) {
            return new MiniLmNodeKernel(loadAside(MiniLmWeights::fromSystemPropertyOrClasspath),
                    weights -> new MiniLmCudaEncoder(new MiniLmCudaKernels(cuda), weights, cudaSettings));
        }
        return new MiniLmNodeKernel(loadAside(MiniLmOnnxEncoder::fromSystemPropertyOrClasspath), encoder -> encoder);
    }

    /** The encoder's {@code model} and the tokenizer, read on a daemon thread. */
    private static <M> CompletableFuture<MiniLmNodeKernel.Loaded<M>> loadAside(Supplier<M> model) {
        CompletableFuture<MiniLmNodeKernel.Loaded<M>> loading = new CompletableFuture<>();
        Thread loader = new Thread(() -> {
            long start = System.nanoTime();
            try {
                MiniLmTokenizer tokenizer = MiniLmTokenizer.fromClasspath();
                M loaded;
                try {
                    loaded = model.get();
                } catch (RuntimeException | Error e) {
                    tokenizer.close();
                    throw e;
                }
                loading.complete(new MiniLmNodeKernel.Loaded<>(loaded, tokenizer));
                log.info("{}: {} and tokenizer loaded in {} ms", MiniLmModel.NAME, loaded.getClass().getSimpleName(),
                        (System.nanoTime() - start) / 1_000_000);
            } catch (Throwable e) {
                log.error("{}: loading failed; its requests will fail", MiniLmModel.NAME, e);
                loading.completeExceptionally(e);
            }
        }, "mstar-minilm-loader");
        loader.setDaemon(true);
        loader.start();
        return loading;
    }
}
