package io.mstar.worker.streaming;

/**
 * Chunks of {@code chunk} new tokens, each after the first preceded by the {@code leftContext} tokens before
 * it, so a causal decoder (a streaming vocoder) warms its state up on frames it already emitted and the seams
 * between chunks stay smooth. The consumer trims the context part of its output.
 *
 * @param chunk new tokens per chunk
 * @param leftContext already-delivered tokens repeated at the front of every chunk but the first
 */
public record LeftContextChunkPolicy(int chunk, int leftContext) implements ChunkPolicy {

    public LeftContextChunkPolicy {
        if (chunk < 1 || leftContext < 0) {
            throw new IllegalArgumentException("need chunk >= 1 and leftContext >= 0, got chunk=" + chunk
                    + " leftContext=" + leftContext);
        }
    }

    @Override
    public int newTokens(int chunkIndex) {
        return chunk;
    }

    @Override
    public int contextTokens(int chunkIndex) {
        return chunkIndex == 0 ? 0 : leftContext;
    }
}
