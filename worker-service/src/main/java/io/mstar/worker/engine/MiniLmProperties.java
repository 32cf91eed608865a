package io.mstar.worker.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.mstar.tensor.device.cuda.GemmPrecision;
import io.mstar.worker.kernel.minilm.MiniLmCudaSettings;

/**
 * minilm-embed on a GPU ({@code mstar.worker.minilm.*}; docs/minilm-embed.md#on-a-gpu). Host workers ignore them.
 *
 * @param precision  the linear layers' products: {@code fp32} (default; ONNX Runtime's embeddings to cosine 0.9999),
 *                   {@code tf32} or {@code bf16} (tensor cores; cosine 0.999 and 0.99 at worst)
 * @param cudaGraphs replay the encoder as one captured CUDA graph per padded batch shape (default true)
 */
@ConfigurationProperties("mstar.worker.minilm")
public record MiniLmProperties(@DefaultValue("fp32") GemmPrecision precision, @DefaultValue("true") boolean cudaGraphs) {

    public MiniLmCudaSettings cuda() {
        return new MiniLmCudaSettings(precision, cudaGraphs);
    }
}
