package io.mstar.worker.kernel.minilm;

import java.util.List;

/**
 * A BERT sentence encoder: word-piece ids in, L2-normalised mean-pooled embeddings out. One batch of sentences of
 * different lengths runs as one forward pass (padded to the longest, masked). Owned by one thread (the engine loop).
 */
public interface MiniLmEncoder extends AutoCloseable {

    /**
     * One embedding of {@code config().hidden()} floats per sentence, in order. Each sentence holds its word-piece
     * ids, {@code [CLS]} and {@code [SEP]} included, at least 1 and at most {@code maxPositions} of them, each below
     * the vocabulary size.
     */
    float[][] encode(List<int[]> sentences);

    MiniLmConfig config();

    /** Frees what the encoder holds on its device (the weights on a GPU). */
    @Override
    void close();

    /** Checks ids against the model's limits; shared by every implementation. */
    static void check(MiniLmConfig config, List<int[]> sentences) {
        for (int[] s : sentences) {
            if (s.length < 1 || s.length > config.maxPositions()) {
                throw new IllegalArgumentException("a sentence has " + s.length + " word-pieces; 1.."
                        + config.maxPositions() + " are allowed");
            }
            for (int id : s) {
                if (id < 0 || id >= config.vocab()) {
                    throw new IllegalArgumentException("word-piece id " + id + " is outside the vocabulary");
                }
            }
        }
    }
}
