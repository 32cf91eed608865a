package io.mstar.worker.kernel.minilm;

/**
 * The shape of a BERT encoder as minilm-embed runs it.
 *
 * @param vocab        word-piece vocabulary size
 * @param hidden       hidden width
 * @param layers       encoder layers
 * @param heads        attention heads ({@code hidden / heads} per head)
 * @param intermediate MLP width
 * @param maxPositions learned position embeddings (longest sequence)
 * @param eps          LayerNorm epsilon
 */
public record MiniLmConfig(int vocab, int hidden, int layers, int heads, int intermediate, int maxPositions, float eps) {

    /** all-MiniLM-L6-v2 (sentence-transformers), as in its config.json. */
    public static final MiniLmConfig ALL_MINILM_L6_V2 = new MiniLmConfig(30522, 384, 6, 12, 1536, 512, 1e-12f);

    public MiniLmConfig {
        if (hidden % heads != 0) {
            throw new IllegalArgumentException("hidden " + hidden + " is not a multiple of heads " + heads);
        }
    }

    public int headDim() {
        return hidden / heads;
    }
}
