package io.mstar.worker.kv;

/**
 * A snapshot of a {@link PageAllocator}.
 *
 * @param totalPages pages in the pool
 * @param freePages pages free now
 * @param pagesAllocated pages handed out since start
 * @param pagesFreed pages returned since start
 * @param exhaustions allocations refused for lack of pages (each failed one request)
 * @param peakPagesInUse most pages in use at once since start
 */
public record PageAllocatorStats(int totalPages, int freePages, long pagesAllocated, long pagesFreed,
                                 long exhaustions, int peakPagesInUse) {

    public int pagesInUse() {
        return totalPages - freePages;
    }
}
