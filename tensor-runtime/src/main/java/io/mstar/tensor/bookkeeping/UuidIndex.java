package io.mstar.tensor.bookkeeping;

/**
 * Open-addressing hash index from a {@code long} uuid to an {@code int} entry number, with double hashing and
 * tombstones: no boxing, one flat array holding each key next to its value, so a probe costs one cache line
 * rather than one per array (a fresh uuid lands on a random slot: that miss is most of what a put costs). Any
 * {@code long} is a valid key (the value word marks empty slots).
 *
 * <p>Load (live + tombstones) stays at most 3/8 of the table: a put must probe past tombstones to an empty slot
 * to know the uuid is new, so they cost as much as live keys. When an insert would pass that, the table is
 * rebuilt: doubled when live keys fill more than a quarter of it, otherwise at the same size, which only clears
 * tombstones – so a churn of puts and forgets at a steady population never grows it.
 */
final class UuidIndex {

    private static final int EMPTY = -1;
    private static final int TOMBSTONE = -2;

    /** Slot i: key at 2i, entry number (or EMPTY / TOMBSTONE) at 2i+1. */
    private long[] table;
    private int mask;
    private int live;
    private int used;
    private int rebuilds;

    UuidIndex(int expected) {
        // The expected population at a quarter of the table (the point past which it doubles): churn then leaves
        // an eighth of a table of tombstones between rebuilds, each a scan of the whole table. An eighth load
        // measured no faster on the 64-tensor store/release benchmark and costs twice the memory (16 MiB at 100k).
        int cap = Integer.highestOneBit(Math.max(16, expected * 4 - 1)) << 1;
        allocate(cap);
    }

    private void allocate(int cap) {
        table = new long[2 * cap];
        for (int i = 1; i < table.length; i += 2) {
            table[i] = EMPTY;
        }
        mask = cap - 1;
        used = live;
    }

    /** Consecutive uuids share a home block of this many slots (a power of two). */
    static final int BLOCK = 16;

    static int hash(long k) {
        // Uuids are ordinal | incarnation | counter, and one node's output batch is a run of consecutive counters.
        // The block number is scrambled (murmur3 fmix64: low bits alone would cluster producers on each other),
        // the position inside the block is kept, so a batch lands on a few cache lines instead of one random line
        // per tensor – which is what a put and its release otherwise spend their time waiting for.
        long b = k >>> 4;
        b ^= b >>> 33;
        b *= 0xff51afd7ed558ccdL;
        b ^= b >>> 33;
        b *= 0xc4ceb9fe1a85ec53L;
        b ^= b >>> 33;
        return ((int) b << 4) | (int) (k & (BLOCK - 1));
    }

    /**
     * The probe step: odd, so it visits every slot of a power-of-two table, and different per key (double
     * hashing), so the dense blocks above do not merge into long runs the way linear probing would make them.
     */
    static int step(long k) {
        k *= 0x9e3779b97f4a7c15L;
        return (int) (k >>> 40) | 1;
    }

    /** The entry for {@code key}, or -1. */
    int get(long key) {
        long[] t = table;
        int i = hash(key) & mask;
        int step = 0;
        while (true) {
            long v = t[2 * i + 1];
            if (v == EMPTY) {
                return -1;
            }
            if (v != TOMBSTONE && t[2 * i] == key) {
                return (int) v;
            }
            if (step == 0) {
                step = step(key);
            }
            i = (i + step) & mask;
        }
    }

    /** The slot holding {@code key}, or -1; valid until the next insert (which may rebuild). */
    int slot(long key) {
        long[] t = table;
        int i = hash(key) & mask;
        int step = 0;
        while (true) {
            long v = t[2 * i + 1];
            if (v == EMPTY) {
                return -1;
            }
            if (v != TOMBSTONE && t[2 * i] == key) {
                return i;
            }
            if (step == 0) {
                step = step(key);
            }
            i = (i + step) & mask;
        }
    }

    int entryAt(int slot) {
        return (int) table[2 * slot + 1];
    }

    /** Unmaps the key at {@code slot} (from {@link #slot}); returns its entry. */
    int removeAt(int slot) {
        int v = (int) table[2 * slot + 1];
        // Always a tombstone: with per-key steps any slot may lie on another key's probe path.
        table[2 * slot + 1] = TOMBSTONE;
        live--;
        return v;
    }

    /**
     * Maps {@code key} to {@code entry} unless it is already mapped; one probe sequence for both questions.
     * Returns -1 when it inserted, else the entry already there (and changes nothing).
     */
    int putIfAbsent(long key, int entry) {
        if ((used + 1) * 8L > (mask + 1) * 3L) {
            rebuild((live + 1) * 4 > mask + 1 ? (mask + 1) * 2 : mask + 1);
        }
        long[] t = table;
        int i = hash(key) & mask;
        int step = step(key);
        int free = -1;
        while (true) {
            long v = t[2 * i + 1];
            if (v == EMPTY) {
                break;
            }
            if (v == TOMBSTONE) {
                if (free < 0) {
                    free = i;
                }
            } else if (t[2 * i] == key) {
                return (int) v;
            }
            i = (i + step) & mask;
        }
        if (free < 0) {
            free = i;
            used++;
        }
        t[2 * free] = key;
        t[2 * free + 1] = entry;
        live++;
        return -1;
    }

    /** Maps {@code key}, which the caller has checked is absent, to {@code entry}. */
    void putAbsent(long key, int entry) {
        if ((used + 1) * 8L > (mask + 1) * 3L) {
            rebuild((live + 1) * 4 > mask + 1 ? (mask + 1) * 2 : mask + 1);
        }
        long[] t = table;
        int i = hash(key) & mask;
        int step = step(key);
        while (t[2 * i + 1] >= 0) {
            i = (i + step) & mask;
        }
        if (t[2 * i + 1] == EMPTY) {
            used++;
        }
        t[2 * i] = key;
        t[2 * i + 1] = entry;
        live++;
    }

    /** Unmaps {@code key}; returns its entry, or -1 when it was absent. */
    int remove(long key) {
        int i = slot(key);
        return i < 0 ? -1 : removeAt(i);
    }

    private void rebuild(int cap) {
        long[] old = table;
        allocate(cap);
        long[] t = table;
        for (int j = 0; j < old.length; j += 2) {
            if (old[j + 1] >= 0) {
                int i = hash(old[j]) & mask;
                int step = step(old[j]);
                while (t[2 * i + 1] != EMPTY) {
                    i = (i + step) & mask;
                }
                t[2 * i] = old[j];
                t[2 * i + 1] = old[j + 1];
            }
        }
        rebuilds++;
    }

    int size() {
        return live;
    }

    int capacity() {
        return mask + 1;
    }

    int tombstones() {
        return used - live;
    }

    int rebuilds() {
        return rebuilds;
    }
}
