package io.mstar.tensor.bookkeeping;

import java.util.Arrays;

/**
 * The fast bookkeeper's entry records: each 8 consecutive longs of one array (about one cache line) rather than a
 * slot in a dozen parallel columns, so a put writes one place instead of a dozen arrays, each with its own bounds
 * check. Free entries are stacked LIFO, so a fresh batch lands on records the batch before it just released. The
 * hot loops of {@link FastTensorBookkeeping} read {@link #words()} and work the free stack through
 * {@link #freeStack()} and {@link #top()} in locals. Owned by the bookkeeper's thread.
 */
final class EntryRecords {

    static final int SHIFT = 3;
    private static final int LONGS = 1 << SHIFT;
    static final int REF = 0;
    static final int ADDRESS = 1;
    static final int NBYTES = 2;
    static final int OFFSET = 3;
    static final int SHM_OFFSET = 4;
    /** origin id in the high half, dtype id in the low half. */
    static final int IDS = 5;
    /** arena segment id (-1: none) in the high half, rank in the low half. */
    static final int SHAPE = 6;
    /**
     * The {@link LayoutBlocks} block holding the dims and strides in the high half; the flags and the row's offset
     * within the block in the low half (a block holds fewer than 2^29 values, so the top two bits are free).
     */
    static final int LAYOUT = 7;
    static final long PERSIST = 1L << 30;
    static final long MEM_REGISTERED = 1L << 31;
    static final long FLAT_OFFSET = (1L << 30) - 1;

    private int cap;
    private int high;
    private int[] free;
    private int top;
    private long[] words;
    /** Per entry, the epoch of the repeated-uuid check that last saw it. */
    private int[] stamp;
    private int epoch = 1;

    EntryRecords(int cap) {
        allocate(cap);
    }

    private void allocate(int newCap) {
        cap = newCap;
        free = free == null ? new int[newCap] : Arrays.copyOf(free, newCap);
        words = words == null ? new long[newCap * LONGS] : Arrays.copyOf(words, newCap * LONGS);
        stamp = stamp == null ? new int[newCap] : Arrays.copyOf(stamp, newCap);
    }

    long[] words() {
        return words;
    }

    int[] freeStack() {
        return free;
    }

    int top() {
        return top;
    }

    /** Sets the free stack's top after a loop that popped or pushed through {@link #freeStack()}. */
    void top(int newTop) {
        top = newTop;
    }

    /**
     * Makes sure {@code n} entries can be popped off the free stack, stacking never-used ones as needed, so a batch
     * pops them with no per-row check and keeps the stack's top in a local rather than in a field it loads and stores
     * back for every row.
     */
    void reserve(int n) {
        while (top < n) {
            if (high == cap) {
                allocate(cap * 2);
            }
            free[top++] = high++;
        }
    }

    /** A recycled or new entry, to be written whole ({@link #write}). */
    int take() {
        reserve(1);
        return free[--top];
    }

    void give(int e) {
        free[top++] = e;
    }

    /**
     * Writes every word of entry {@code e} (a recycled one keeps its last tenant's); the caller counts its uses of
     * {@code originId} and of the layout block named in {@code layout}.
     */
    void write(int e, int originId, int dtypeId, long addr, long bytes, long off, int rank, long layout) {
        long[] t = words;
        int b = e << SHIFT;
        t[b + REF] = 0;
        t[b + ADDRESS] = addr;
        t[b + NBYTES] = bytes;
        t[b + OFFSET] = off;
        t[b + SHM_OFFSET] = 0;
        t[b + IDS] = (long) originId << 32 | dtypeId;
        t[b + SHAPE] = -1L << 32 | rank;
        t[b + LAYOUT] = layout;
    }

    void place(int e, int segmentId, long shmOffset) {
        int b = e << SHIFT;
        words[b + SHAPE] = (long) segmentId << 32 | (words[b + SHAPE] & 0xFFFF_FFFFL);
        words[b + SHM_OFFSET] = shmOffset;
    }

    void flag(int e, long flag, boolean on) {
        int b = (e << SHIFT) + LAYOUT;
        words[b] = on ? words[b] | flag : words[b] & ~flag;
    }

    boolean has(int e, long flag) {
        return (words[(e << SHIFT) + LAYOUT] & flag) != 0;
    }

    int originOf(int e) {
        return (int) (words[(e << SHIFT) + IDS] >>> 32);
    }

    int blockOf(int e) {
        return (int) (words[(e << SHIFT) + LAYOUT] >>> 32);
    }

    ReferenceInfo referenceInfo(int e) {
        int b = e << SHIFT;
        long f = words[b + LAYOUT];
        return new ReferenceInfo(words[b + REF], (f & PERSIST) != 0, (f & MEM_REGISTERED) != 0);
    }

    /** Starts a repeated-uuid check: no entry is stamped in the new epoch. */
    void newEpoch() {
        if (++epoch == Integer.MAX_VALUE) {
            Arrays.fill(stamp, 0);
            epoch = 1;
        }
    }

    /** Stamps entry {@code e} in this epoch; false when it was already. */
    boolean stampFirst(int e) {
        if (stamp[e] == epoch) {
            return false;
        }
        stamp[e] = epoch;
        return true;
    }
}
