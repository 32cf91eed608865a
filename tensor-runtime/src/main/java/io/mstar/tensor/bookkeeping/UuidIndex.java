package io.mstar.tensor.bookkeeping;

import java.util.Arrays;

/**
 * Open-addressing hash index from a {@code long} uuid to an {@code int} entry number, with linear probing and
 * tombstones: no boxing, two flat arrays. Any {@code long} is a valid key (the value array marks empty slots).
 *
 * <p>Load (live + tombstones) stays at most half the table. When an insert would pass that, the table is
 * rebuilt: doubled when live keys fill more than a quarter of it, otherwise at the same size, which only clears
 * tombstones – so a churn of puts and forgets at a steady population never grows it.
 */
final class UuidIndex {

    private static final int EMPTY = -1;
    private static final int TOMBSTONE = -2;

    private long[] keys;
    private int[] vals;
    private int mask;
    private int live;
    private int used;
    private int rebuilds;

    UuidIndex(int expected) {
        int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        allocate(cap);
    }

    private void allocate(int cap) {
        keys = new long[cap];
        vals = new int[cap];
        Arrays.fill(vals, EMPTY);
        mask = cap - 1;
        used = live;
    }

    static int hash(long k) {
        // murmur3 fmix64: uuids pack ordinal | incarnation | counter, so low bits alone would cluster.
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return (int) k;
    }

    /** The entry for {@code key}, or -1. */
    int get(long key) {
        int i = hash(key) & mask;
        while (true) {
            int v = vals[i];
            if (v == EMPTY) {
                return -1;
            }
            if (v != TOMBSTONE && keys[i] == key) {
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    /** Maps {@code key}, which the caller has checked is absent, to {@code entry}. */
    void putAbsent(long key, int entry) {
        if ((used + 1) * 2 > vals.length) {
            rebuild((live + 1) * 4 > vals.length ? vals.length * 2 : vals.length);
        }
        int i = hash(key) & mask;
        while (vals[i] >= 0) {
            i = (i + 1) & mask;
        }
        if (vals[i] == EMPTY) {
            used++;
        }
        keys[i] = key;
        vals[i] = entry;
        live++;
    }

    /** Unmaps {@code key}; returns its entry, or -1 when it was absent. */
    int remove(long key) {
        int i = hash(key) & mask;
        while (true) {
            int v = vals[i];
            if (v == EMPTY) {
                return -1;
            }
            if (v != TOMBSTONE && keys[i] == key) {
                // A slot followed by an empty one ends no probe chain: it can go back to empty.
                if (vals[(i + 1) & mask] == EMPTY) {
                    vals[i] = EMPTY;
                    used--;
                } else {
                    vals[i] = TOMBSTONE;
                }
                live--;
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    private void rebuild(int cap) {
        long[] oldKeys = keys;
        int[] oldVals = vals;
        allocate(cap);
        for (int j = 0; j < oldVals.length; j++) {
            int v = oldVals[j];
            if (v >= 0) {
                int i = hash(oldKeys[j]) & mask;
                while (vals[i] != EMPTY) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                vals[i] = v;
            }
        }
        rebuilds++;
    }

    int size() {
        return live;
    }

    int capacity() {
        return vals.length;
    }

    int tombstones() {
        return used - live;
    }

    int rebuilds() {
        return rebuilds;
    }
}
