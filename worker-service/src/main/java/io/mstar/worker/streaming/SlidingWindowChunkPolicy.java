package io.mstar.worker.streaming;

/**
 * Windows of {@code window} tokens advancing by {@code stride} (an audio codec decoding overlapping frames):
 * the first chunk is a whole window of new tokens, every later one {@code stride} new tokens behind the last
 * {@code window - stride} of the previous window.
 *
 * <p>A stride longer than the window would skip tokens, which a stream must never do, so it is rejected.
 *
 * @param window tokens per chunk
 * @param stride tokens the window advances per chunk, {@code 1..window}
 */
public record SlidingWindowChunkPolicy(int window, int stride) implements ChunkPolicy {

    public SlidingWindowChunkPolicy {
        if (window < 1 || stride < 1 || stride > window) {
            throw new IllegalArgumentException("need 1 <= stride <= window, got window=" + window
                    + " stride=" + stride);
        }
    }

    @Override
    public int newTokens(int chunkIndex) {
        return chunkIndex == 0 ? window : stride;
    }

    @Override
    public int contextTokens(int chunkIndex) {
        return chunkIndex == 0 ? 0 : window - stride;
    }
}
