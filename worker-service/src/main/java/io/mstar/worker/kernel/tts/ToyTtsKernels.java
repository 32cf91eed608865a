package io.mstar.worker.kernel.tts;

import java.util.Map;
import java.util.function.Supplier;

import io.mstar.model.ToyTtsModel;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.streaming.SlidingWindowChunkPolicy;

/**
 * The toy-tts model's kernels: {@code lm} over a {@link LmBackend} and the {@code codec}, whose input stream is cut
 * in sliding windows of {@value ToyTtsModel#CODEC_WINDOW} tokens advancing by {@value ToyTtsModel#CODEC_STRIDE}.
 */
public final class ToyTtsKernels {

    private ToyTtsKernels() {
    }

    /** Everything in plain Java: runs on any device through its copies. */
    public static ModelKernels host() {
        return with(() -> new HostLmBackend(ToyTtsWeights.generate()));
    }

    /** {@code lm} on the backend {@code backend} makes at first use; the codec in Java. */
    public static ModelKernels with(Supplier<LmBackend> backend) {
        return new ModelKernels(ToyTtsModel.NAME, Map.of(
                ToyTtsModel.LM, new ToyTtsLmKernel(backend),
                ToyTtsModel.CODEC, new ToyTtsCodecKernel()),
                Map.of(ToyTtsModel.NEW_TOKEN, new SlidingWindowChunkPolicy(ToyTtsModel.CODEC_WINDOW,
                        ToyTtsModel.CODEC_STRIDE)));
    }
}
