package io.mstar.worker.streaming;

/**
 * Non-overlapping chunks of {@code size} tokens.
 *
 * @param size tokens per chunk; the final flush may carry fewer
 */
public record FixedChunkPolicy(int size) implements ChunkPolicy {

    public FixedChunkPolicy {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1: " + size);
        }
    }

    @Override
    public int newTokens(int chunkIndex) {
        return size;
    }

    @Override
    public int contextTokens(int chunkIndex) {
        return 0;
    }
}
