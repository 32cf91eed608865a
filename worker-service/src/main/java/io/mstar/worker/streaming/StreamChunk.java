package io.mstar.worker.streaming;

import java.util.ArrayList;
import java.util.List;

/**
 * A chunk cut by a {@link StreamBuffer}: leading context tokens the consumer has seen before, then tokens it
 * sees for the first time, in stream order.
 *
 * <p>Ownership: the buffer keeps owning every entry of {@code context} and {@code fresh} that is not in
 * {@code released}; a later chunk may carry it again as context. The entries of {@code released} pass to the
 * caller with this chunk: the buffer has forgotten them, and the caller drops them once the consumer is done
 * with this chunk. Every registered tensor is released exactly once, by a chunk or by
 * {@link StreamBuffer#close()}.
 *
 * @param index 0-based chunk number of this stream
 * @param start stream position of the chunk's first token (of its first fresh one when it has no context; for
 *              an empty final chunk, the stream's length)
 * @param context already-delivered tokens repeated as context, in order
 * @param fresh tokens delivered for the first time, in order; empty only in an empty final chunk
 * @param isFinal the last chunk of the stream: the producer is done and nothing remains
 * @param released entries handed over to the caller with this chunk, in order
 */
public record StreamChunk<T>(int index, long start, List<StreamEntry<T>> context, List<StreamEntry<T>> fresh,
                             boolean isFinal, List<StreamEntry<T>> released) {

    public StreamChunk {
        context = List.copyOf(context);
        fresh = List.copyOf(fresh);
        released = List.copyOf(released);
    }

    /** Context then fresh tokens: what the consuming node reads. */
    public List<T> tensors() {
        List<T> all = new ArrayList<>(context.size() + fresh.size());
        context.forEach(e -> all.add(e.tensor()));
        fresh.forEach(e -> all.add(e.tensor()));
        return all;
    }

    /** Context plus fresh tokens. */
    public int size() {
        return context.size() + fresh.size();
    }

    public boolean isEmpty() {
        return size() == 0;
    }
}
