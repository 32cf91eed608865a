package io.mstar.worker.streaming;

/**
 * How a {@link StreamBuffer} cuts a stream of tokens into chunks for the consuming node.
 *
 * <p>Every policy is described by two numbers per chunk: how many tokens it delivers for the first time
 * ({@link #newTokens}) and how many already-delivered tokens just before those it carries again as leading
 * context ({@link #contextTokens}). Fixed, sliding-window and left-context chunking are all this shape, so the
 * buffer has one cutting rule and one retention rule instead of one per policy. A policy is a pure function of
 * the chunk index: one instance may serve every request's buffer.
 */
public interface ChunkPolicy {

    /** Tokens chunk {@code chunkIndex} delivers for the first time; at least 1. A final flush may deliver fewer. */
    int newTokens(int chunkIndex);

    /**
     * Already-delivered tokens chunk {@code chunkIndex} carries again before its new ones; at least 0. The buffer
     * keeps that many tokens after cutting the previous chunk, and gives fewer only when fewer exist.
     */
    int contextTokens(int chunkIndex);
}
