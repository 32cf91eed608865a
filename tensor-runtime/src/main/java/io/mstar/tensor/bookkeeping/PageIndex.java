package io.mstar.tensor.bookkeeping;

/**
 * Open-addressing hash map from a uuid's page key ({@code uuid >>> FastTensorBookkeeping.PAGE_BITS}) to the page
 * holding that run of uuids. Linear probing with backward-shift deletion, so removals leave no tombstones and the
 * table is never rebuilt except to grow: a page comes and goes with every batch, and a tombstone per batch used to
 * force a full-table rebuild every few dozen batches.
 *
 * <p>One node's output batch is a run of consecutive counters, so a batch touches one or two keys here; the table
 * holds about one key per 64 live uuids and stays in cache where a per-uuid index would not.
 */
final class PageIndex {

    private static final long EMPTY = -1;

    /** Slot i: key at 2i, page number (or EMPTY) at 2i+1. */
    private long[] table;
    private int mask;
    private int shift;
    private int size;
    private int rebuilds;

    PageIndex(int expectedPages) {
        allocate(Integer.highestOneBit(Math.max(8, expectedPages * 2 - 1)) << 1);
    }

    private void allocate(int cap) {
        table = new long[2 * cap];
        for (int i = 1; i < table.length; i += 2) {
            table[i] = EMPTY;
        }
        mask = cap - 1;
        shift = 64 - Integer.numberOfTrailingZeros(cap);
    }

    /** Fibonacci hashing: one multiply, and consecutive page keys land far apart, so linear probing stays short. */
    private int home(long key) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> shift);
    }

    /** The page for {@code key}, or -1. */
    int get(long key) {
        long[] t = table;
        int i = home(key);
        while (true) {
            long v = t[2 * i + 1];
            if (v == EMPTY) {
                return -1;
            }
            if (t[2 * i] == key) {
                return (int) v;
            }
            i = (i + 1) & mask;
        }
    }

    /** Maps {@code key}, which the caller knows is absent, to {@code page}. */
    void putAbsent(long key, int page) {
        if ((size + 1) * 2 > mask + 1) {
            rebuild((mask + 1) * 2);
        }
        long[] t = table;
        int i = home(key);
        while (t[2 * i + 1] != EMPTY) {
            i = (i + 1) & mask;
        }
        t[2 * i] = key;
        t[2 * i + 1] = page;
        size++;
    }

    /** Unmaps {@code key}, which the caller knows is present, shifting later keys of its run back. */
    void remove(long key) {
        long[] t = table;
        int i = home(key);
        while (t[2 * i] != key || t[2 * i + 1] == EMPTY) {
            i = (i + 1) & mask;
        }
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (t[2 * j + 1] == EMPTY) {
                break;
            }
            int h = home(t[2 * j]);
            // Key at j may move into the hole at i unless its home lies cyclically in (i, j].
            boolean stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays) {
                t[2 * i] = t[2 * j];
                t[2 * i + 1] = t[2 * j + 1];
                i = j;
            }
        }
        t[2 * i + 1] = EMPTY;
        size--;
    }

    private void rebuild(int cap) {
        long[] old = table;
        allocate(cap);
        long[] t = table;
        for (int j = 0; j < old.length; j += 2) {
            if (old[j + 1] != EMPTY) {
                int i = home(old[j]);
                while (t[2 * i + 1] != EMPTY) {
                    i = (i + 1) & mask;
                }
                t[2 * i] = old[j];
                t[2 * i + 1] = old[j + 1];
            }
        }
        rebuilds++;
    }

    int size() {
        return size;
    }

    int capacity() {
        return mask + 1;
    }

    int rebuilds() {
        return rebuilds;
    }
}
