package io.mstar.worker.kernel.minilm;

import io.mstar.tensor.device.cuda.GemmPrecision;

/**
 * How minilm-embed runs on a GPU.
 *
 * @param precision the linear layers' products (docs/minilm-embed.md#on-a-gpu): FP32 matches ONNX Runtime to
 *                  cosine 0.9999; TF32 and BF16 trade accuracy for tensor cores
 * @param graphs    capture the whole encoder as one CUDA graph per padded (batch, length) and replay it, instead
 *                  of some 50 launches per batch
 */
public record MiniLmCudaSettings(GemmPrecision precision, boolean graphs) {

    public MiniLmCudaSettings {
        if (precision == null) {
            throw new IllegalArgumentException("minilm precision is required (fp32, tf32 or bf16)");
        }
    }

    /**
     * The cosine to ONNX Runtime's FP32 embeddings that each precision keeps on every sentence, as the gpu tests
     * assert it on the golden set.
     */
    public static double minCosine(GemmPrecision precision) {
        return switch (precision) {
            case FP32 -> 0.9999;
            case TF32 -> 0.999;
            case BF16 -> 0.99;
        };
    }

    public static MiniLmCudaSettings defaults() {
        return new MiniLmCudaSettings(GemmPrecision.FP32, true);
    }
}
