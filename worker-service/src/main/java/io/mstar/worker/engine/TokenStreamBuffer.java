package io.mstar.worker.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The consumer side of one streaming edge of one request (ARCHITECTURE §8), with the fixed chunk policy: tokens are
 * registered in the order their {@code InputSignals} arrived, land in whatever order their reads complete, and are
 * cut into chunks of {@code chunkSize} in registration order. After {@code producer_done} full chunks are still cut
 * as usual and the remainder — shorter than a chunk, possibly empty — becomes exactly one final chunk, so where the
 * chunk boundaries fall never depends on when {@code producer_done} arrived.
 *
 * <p>This is the seam for {@code io.mstar.worker.streaming}'s buffers and chunk policies: the engine only registers,
 * fills and polls. Each landed token holds one reference, handed to the chunk that takes it. Owned by the engine loop.
 */
final class TokenStreamBuffer {

    /** A registered token; {@code uuid} is set when its read lands. */
    static final class Entry {
        Long uuid;
    }

    /** Tokens taken in registration order; {@code last} marks the final chunk. */
    record Chunk(List<Long> uuids, boolean last) {
    }

    private final int chunkSize;
    private final ArrayDeque<Entry> entries = new ArrayDeque<>();
    private int consumed;
    private boolean finalCut;
    /** Element type of the tokens seen, for an empty final chunk; bytes until one landed. */
    private String dtype = "uint8";

    TokenStreamBuffer(int chunkSize) {
        this.chunkSize = chunkSize;
    }

    Entry register() {
        Entry entry = new Entry();
        entries.addLast(entry);
        return entry;
    }

    void landed(Entry entry, long uuid, String dtype) {
        entry.uuid = uuid;
        this.dtype = dtype;
    }

    String dtype() {
        return dtype;
    }

    /** The next chunk if one can be cut now, else null. */
    Chunk poll(boolean producerDone) {
        if (finalCut) {
            return null;
        }
        int landedPrefix = 0;
        for (Entry e : entries) {
            if (e.uuid == null) {
                break;
            }
            landedPrefix++;
        }
        boolean allLanded = landedPrefix == entries.size();
        if (producerDone && allLanded && entries.size() < chunkSize) {
            finalCut = true;
            return new Chunk(take(entries.size()), true);
        }
        if (landedPrefix >= chunkSize) {
            return new Chunk(take(chunkSize), false);
        }
        return null;
    }

    private List<Long> take(int n) {
        List<Long> uuids = new ArrayList<>(n);
        Iterator<Entry> it = entries.iterator();
        for (int i = 0; i < n; i++) {
            uuids.add(it.next().uuid);
            it.remove();
        }
        consumed += n;
        return uuids;
    }

    /** Tokens handed to chunks so far: {@code stream_tokens_consumed}. */
    int consumed() {
        return consumed;
    }

    boolean finalCut() {
        return finalCut;
    }
}
