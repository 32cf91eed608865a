package io.mstar.tensor.bookkeeping;

import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * The fast bookkeeper's index over {@code long} uuids: uuids are ordinal | incarnation | counter and one node's output
 * batch is a run of consecutive counters, so a uuid is split into a page key (all but the low {@value #PAGE_BITS}
 * bits) and a row within the page. {@link PageIndex} maps page keys to pages; a page is {@value #PAGE} row slots, each
 * naming an entry ({@code entry + 1}, 0 where none). A batch then costs one or two hash probes instead of one per
 * uuid, and pages are recycled from a LIFO free list, so a fresh batch lands on memory the batch before it just
 * released rather than on a cold slot that a hash of a never-seen uuid picked. A page goes back when its last row
 * does. Row positions ({@code page << PAGE_BITS | row}) index the bookkeeper's per-row caches too, which it grows
 * when told the row capacity. Owned by the bookkeeper's thread.
 */
final class RowIndex {

    /** Low uuid bits that pick the row within a page. */
    static final int PAGE_BITS = 6;
    static final int PAGE = 1 << PAGE_BITS;
    static final int ROW_MASK = PAGE - 1;
    /** No page key is this: page keys are {@code uuid >>> PAGE_BITS}, so their top bits are clear. */
    static final long NO_PAGE_KEY = -1L;

    private final PageIndex pages;
    private final IntConsumer rowCapacity;
    private int pageCap;
    private int pageHigh;
    private int[] rows;
    private int[] pageLive;
    private long[] pageKey;
    private int[] freePages;
    private int freePageTop;
    private int live;
    private int[] scratch = new int[64];

    /** @param rowCapacity told the number of row positions at the start and after each growth */
    RowIndex(int expectedPages, IntConsumer rowCapacity) {
        this.rowCapacity = rowCapacity;
        pages = new PageIndex(expectedPages);
        allocate(expectedPages);
    }

    private void allocate(int cap) {
        pageCap = cap;
        rows = grow(rows, cap * PAGE);
        pageLive = grow(pageLive, cap);
        pageKey = pageKey == null ? new long[cap] : Arrays.copyOf(pageKey, cap);
        freePages = grow(freePages, cap);
        rowCapacity.accept(cap * PAGE);
    }

    private static int[] grow(int[] a, int cap) {
        return a == null ? new int[cap] : Arrays.copyOf(a, cap);
    }

    /** Entry + 1 by row position, 0 where none; the hot loops read it in a local. */
    int[] rows() {
        return rows;
    }

    /** The page of {@code key}, or -1. */
    int pageOf(long key) {
        return pages.get(key);
    }

    /** The page index itself, for loops that probe it once per page in a local. */
    PageIndex pages() {
        return pages;
    }

    /** A page for {@code key}, which has none: the one released last, so its rows are still in cache. */
    int newPage(long key) {
        int p;
        if (freePageTop > 0) {
            p = freePages[--freePageTop];
        } else {
            if (pageHigh == pageCap) {
                allocate(pageCap * 2);
            }
            p = pageHigh++;
        }
        pageKey[p] = key;
        pages.putAbsent(key, p);
        return p;
    }

    /** The row position of {@code id}, or -1 when it has no record. */
    int find(long id) {
        int p = pages.get(id >>> PAGE_BITS);
        if (p < 0) {
            return -1;
        }
        int pos = p << PAGE_BITS | (int) id & ROW_MASK;
        return rows[pos] == 0 ? -1 : pos;
    }

    /** Maps the empty row position {@code pos} to entry {@code e}. */
    void link(int pos, int e) {
        rows[pos] = e + 1;
        pageLive[pos >>> PAGE_BITS]++;
        live++;
    }

    /** Counts {@code n} rows a batch linked on page {@code p} through {@link #rows()} directly. */
    void linked(int p, int n) {
        pageLive[p] += n;
    }

    /** Adds {@code n} (negative: removes) to the rows mapped, for a batch that linked or cleared them directly. */
    void counted(int n) {
        live += n;
    }

    /** Takes {@code n} rows off page {@code p}'s count, giving the page back with its last one. */
    void releaseRows(int p, int n) {
        if ((pageLive[p] -= n) == 0) {
            pages.remove(pageKey[p]);
            freePages[freePageTop++] = p;
        }
    }

    /** Unmaps row position {@code pos}, its page with its last row; answers the entry it named. */
    int unlink(int pos) {
        int e = rows[pos] - 1;
        rows[pos] = 0;
        live--;
        releaseRows(pos >>> PAGE_BITS, 1);
        return e;
    }

    int live() {
        return live;
    }

    /** Scratch for {@code n} row positions, valid until the next call. */
    int[] scratch(int n) {
        if (scratch.length < n) {
            scratch = new int[Math.max(n, scratch.length * 2)];
        }
        return scratch;
    }

    /** Page index slots, for tests of growth. */
    int indexCapacity() {
        return pages.capacity();
    }

    /** Times the page index grew. */
    int indexRebuilds() {
        return pages.rebuilds();
    }

    /** Pages mapped now. */
    int livePages() {
        return pages.size();
    }

    /** Pages ever allocated (live or on the free list). */
    int allocatedPages() {
        return pageHigh;
    }
}
