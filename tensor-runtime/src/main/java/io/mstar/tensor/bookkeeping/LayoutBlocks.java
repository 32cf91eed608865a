package io.mstar.tensor.bookkeeping;

import java.util.Arrays;

/**
 * The fast bookkeeper's dims and strides: one block per stored batch, holding the batch's flat dims and then its
 * flat strides exactly as {@link ColumnarTensorInfo} lays them out, so a batch's layouts go in with two bulk copies
 * rather than a handful of scattered stores per row (a quarter of a 64-tensor batch's cost when they were copied
 * row by row into the entry records). A block counts the rows that still use it and goes back with the last.
 *
 * <p>A block is {@code 1 + 2F} longs for F flat values, rounded up to a power of two: a header ({@code uses << 32 |
 * F}), the dims, the strides. Freed blocks are stacked per size, most recent on top, so the next batch of the same
 * shape writes where the last one just was. Sizes are not coalesced: a worker's batches repeat their shapes, so the
 * blocks of one size are reused by the next batch of that size.
 *
 * <p>A long-lived row keeps its whole batch's block: {@code 16 × F} bytes rounded up to a power of two, for a tensor
 * whose batch-mates all went. That is the price of copying a batch in bulk.
 *
 * <p>Owned by the bookkeeper's thread; not thread-safe.
 */
final class LayoutBlocks {

    private static final int MIN_SHIFT = 3;
    /** Most flat values one block holds: past this its header could not count them. */
    static final int MAX_FLAT = (1 << 29) - 1;

    private long[] store;
    private int high;
    private int[][] freeBySize = new int[32][];
    private final int[] freeTop = new int[32];
    private int live;

    LayoutBlocks(int expectedLongs) {
        store = new long[Math.max(1 << MIN_SHIFT, expectedLongs)];
    }

    /**
     * A block for {@code flat} dims and as many strides, held by nobody yet; the caller writes its layouts at
     * {@link #dims} and {@link #strides} of {@link #store()} (fetched after this call: it may have grown) and
     * {@link #hold}s it.
     */
    int allocate(int flat) {
        if (flat < 0 || flat > MAX_FLAT) {
            throw new IllegalArgumentException("a layout block holds at most " + MAX_FLAT + " values, not " + flat);
        }
        int size = sizeClass(flat);
        int start;
        int[] free = freeBySize[size];
        if (free != null && freeTop[size] > 0) {
            start = free[--freeTop[size]];
        } else {
            int longs = 1 << (size + MIN_SHIFT);
            if (store.length - high < longs) {
                store = Arrays.copyOf(store, Math.max(store.length * 2, high + longs));
            }
            start = high;
            high += longs;
        }
        store[start] = flat;
        live++;
        return start;
    }

    private static int sizeClass(int flat) {
        int longs = 1 + 2 * flat;
        return Math.max(0, 32 - Integer.numberOfLeadingZeros(longs - 1) - MIN_SHIFT);
    }

    long[] store() {
        return store;
    }

    static int dims(int start) {
        return start + 1;
    }

    int strides(int start) {
        return start + 1 + (int) store[start];
    }

    void hold(int start, int rows) {
        store[start] += (long) rows << 32;
    }

    /** Lets go of {@code rows} uses of the block, freeing it with the last. */
    void release(int start, int rows) {
        long header = store[start] -= (long) rows << 32;
        if (header >>> 32 == 0) {
            int size = sizeClass((int) header);
            int[] free = freeBySize[size];
            if (free == null) {
                free = freeBySize[size] = new int[8];
            } else if (freeTop[size] == free.length) {
                free = freeBySize[size] = Arrays.copyOf(free, free.length * 2);
            }
            free[freeTop[size]++] = start;
            live--;
        }
    }

    /** Blocks held now, for tests that a block goes with its last row. */
    int liveBlocks() {
        return live;
    }

    /** Longs ever handed out (live or stacked free), for tests that churn reuses blocks. */
    int allocatedLongs() {
        return high;
    }
}
