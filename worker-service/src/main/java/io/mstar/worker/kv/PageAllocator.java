package io.mstar.worker.kv;

import io.mstar.loop.OwnerThread;

import java.util.BitSet;

import static io.mstar.worker.kv.KvCacheException.Reason.INVALID_ARGUMENT;
import static io.mstar.worker.kv.KvCacheException.Reason.OUT_OF_PAGES;
import static io.mstar.worker.kv.KvCacheException.Reason.PAGE_NOT_ALLOCATED;

/**
 * Hands out page indices {@code 0..totalPages-1} of a KV pool from a free list.
 *
 * <p>The free list is a stack: the page freed last is handed out first, while it is still warm in caches, and
 * allocation order is a pure function of the call sequence, so a seeded run replays exactly. A bit per page
 * records whether it is allocated, so a page is never handed out twice and a double free is caught, not
 * absorbed. Allocation and free are all-or-nothing: a refused or invalid call changes nothing.
 *
 * <p>Owned by the engine loop (through {@link KvCache}); no threads of its own, not thread-safe, and every
 * method fails loudly when called from a thread other than the first one that used it.
 */
public final class PageAllocator {

    private final int totalPages;
    private final int[] freeStack;
    private final BitSet allocated;
    private final OwnerThread owner = new OwnerThread("page allocator");
    private int freeCount;
    private long pagesAllocated;
    private long pagesFreed;
    private long exhaustions;
    private int peakInUse;

    public PageAllocator(int totalPages) {
        if (totalPages < 0) {
            throw new IllegalArgumentException("totalPages must be >= 0: " + totalPages);
        }
        this.totalPages = totalPages;
        this.freeStack = new int[totalPages];
        this.allocated = new BitSet(totalPages);
        // Lowest index on top, so a fresh pool hands out 0, 1, 2...
        for (int i = 0; i < totalPages; i++) {
            freeStack[i] = totalPages - 1 - i;
        }
        this.freeCount = totalPages;
    }

    /**
     * {@code n} distinct free pages, now allocated.
     *
     * @param requestId the request asking, named in the exception
     * @throws KvCacheException OUT_OF_PAGES when fewer than {@code n} are free; nothing is allocated then
     */
    public int[] allocate(int n, String requestId) {
        owner.check();
        if (n < 0) {
            throw new KvCacheException(INVALID_ARGUMENT, requestId, "cannot allocate " + n + " pages");
        }
        if (n > freeCount) {
            exhaustions++;
            throw new KvCacheException(OUT_OF_PAGES, requestId, "needs " + n + " page(s), " + freeCount
                    + " of " + totalPages + " free");
        }
        int[] pages = new int[n];
        for (int i = 0; i < n; i++) {
            int page = freeStack[--freeCount];
            allocated.set(page);
            pages[i] = page;
        }
        pagesAllocated += n;
        peakInUse = Math.max(peakInUse, totalPages - freeCount);
        return pages;
    }

    /**
     * Returns {@code pages} to the free list.
     *
     * @throws KvCacheException PAGE_NOT_ALLOCATED when any page is outside the pool, free already, or listed
     *                          twice; nothing is freed then
     */
    public void free(int[] pages, String requestId) {
        owner.check();
        BitSet inThisCall = new BitSet();
        for (int page : pages) {
            if (page < 0 || page >= totalPages || !allocated.get(page) || inThisCall.get(page)) {
                throw new KvCacheException(PAGE_NOT_ALLOCATED, requestId, "page " + page
                        + " is not allocated (double free?) in a pool of " + totalPages);
            }
            inThisCall.set(page);
        }
        for (int page : pages) {
            allocated.clear(page);
            freeStack[freeCount++] = page;
        }
        pagesFreed += pages.length;
    }

    public boolean isAllocated(int page) {
        return page >= 0 && page < totalPages && allocated.get(page);
    }

    public int freePages() {
        return freeCount;
    }

    public int totalPages() {
        return totalPages;
    }

    public PageAllocatorStats stats() {
        return new PageAllocatorStats(totalPages, freeCount, pagesAllocated, pagesFreed, exhaustions, peakInUse);
    }
}
