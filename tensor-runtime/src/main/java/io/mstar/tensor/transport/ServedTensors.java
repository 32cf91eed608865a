package io.mstar.tensor.transport;

import io.mstar.tensor.LongKeys;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * A {@link TensorSource} over explicitly published buffers: the thread-safe view of a producer's
 * published tensors, fed by its {@link TensorPublisher} (or directly, by a producer without a store).
 * {@link #release} is the producer's free: if a server
 * read has the tensor pinned, the free is deferred and runs (the {@code onFree} callback, e.g. the
 * arena slot's free) on the thread of the last unpin, so a peer never reads reused memory.
 *
 * <p>Thread-safe: the producer's loop publishes and releases, server I/O threads pin and unpin; one
 * lock guards map updates only, and {@code onFree} runs outside it.
 */
public final class ServedTensors implements TensorSource {

    /** Freed uuids remembered so a late read gets 410, not 404; the oldest are forgotten first. */
    static final int TOMBSTONES = 65_536;

    private final Object lock = new Object();
    // guarded by lock
    private final Long2ObjectHashMap<Entry> live = LongKeys.map();
    private final LinkedHashMap<Long, Boolean> freed = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > TOMBSTONES;
        }
    };

    private static final class Entry {
        final long uuid;
        final ByteBuffer bytes;
        final Runnable onFree;
        int pins;
        boolean released;

        Entry(long uuid, ByteBuffer bytes, Runnable onFree) {
            this.uuid = uuid;
            this.bytes = bytes;
            this.onFree = onFree;
        }
    }

    /**
     * Serves {@code bytes} (position..limit) as {@code uuid} until {@link #release}. Ownership of the
     * memory stays with the caller; {@code onFree} is how it gets it back.
     */
    public void publish(long uuid, ByteBuffer bytes, Runnable onFree) {
        Entry entry = new Entry(uuid, bytes.slice().asReadOnlyBuffer(), onFree);
        synchronized (lock) {
            if (live.putIfAbsent(uuid, entry) != null) {
                throw new IllegalStateException("tensor " + uuid + " is already served");
            }
            freed.remove(uuid);
        }
    }

    /**
     * The producer is done with {@code uuid}: frees it now, or at the last unpin when reads have it
     * pinned. Returns whether it was freed now. An unknown uuid is an error, never a silent return.
     */
    public boolean release(long uuid) {
        Entry entry;
        synchronized (lock) {
            entry = live.get(uuid);
            if (entry == null || entry.released) {
                throw new IllegalStateException("release of tensor " + uuid + " that is not served"
                        + (freed.containsKey(uuid) || entry != null ? " (already released)" : ""));
            }
            entry.released = true;
            freed.put(uuid, Boolean.TRUE);
            if (entry.pins > 0) {
                return false;
            }
            live.remove(uuid);
        }
        entry.onFree.run();
        return true;
    }

    @Override
    public Pin pin(long uuid) {
        synchronized (lock) {
            Entry entry = live.get(uuid);
            if (entry == null || entry.released) {
                return freed.containsKey(uuid) ? Pin.FREED : Pin.UNKNOWN;
            }
            entry.pins++;
            return new Pin.Pinned(entry.bytes.duplicate(), new Unpin(entry));
        }
    }

    /** Tensors still holding memory: served, or released but pinned. */
    public int live() {
        synchronized (lock) {
            return live.size();
        }
    }

    /** Pins outstanding over all tensors. */
    public int pins() {
        synchronized (lock) {
            return live.values().stream().mapToInt(e -> e.pins).sum();
        }
    }

    /** Unpins once; a second call is a bug in the server and fails loudly. */
    private final class Unpin implements Runnable {
        private final Entry entry;
        private boolean done;

        Unpin(Entry entry) {
            this.entry = entry;
        }

        @Override
        public void run() {
            boolean free;
            synchronized (lock) {
                if (done) {
                    throw new IllegalStateException("tensor " + entry.uuid + " unpinned twice");
                }
                done = true;
                entry.pins--;
                free = entry.released && entry.pins == 0;
                if (free) {
                    live.remove(entry.uuid);
                }
            }
            if (free) {
                entry.onFree.run(); // the deferred free: the last read is over
            }
        }
    }
}
