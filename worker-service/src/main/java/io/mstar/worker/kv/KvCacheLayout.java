package io.mstar.worker.kv;

import io.mstar.deployment.KvCacheConfig;

/**
 * Where a token's KV lives in the pool. The pool is page-major: page {@code p} is the contiguous byte range
 * {@code [p * pageBytes, (p + 1) * pageBytes)} and token slot {@code s} of it starts {@code s * bytesPerToken}
 * further, so moving one page (offload, a peer's read) is one contiguous copy.
 *
 * @param pageSize tokens per page
 * @param maxNumPages pages in the pool
 * @param bytesPerToken every layer's K and V of one token, as the node's kernels lay them out
 */
public record KvCacheLayout(int pageSize, int maxNumPages, long bytesPerToken) {

    public KvCacheLayout {
        if (pageSize < 1 || maxNumPages < 0 || bytesPerToken < 1) {
            throw new IllegalArgumentException("need pageSize >= 1, maxNumPages >= 0, bytesPerToken >= 1, got "
                    + pageSize + ", " + maxNumPages + ", " + bytesPerToken);
        }
        // Fails here, at load, rather than as a negative allocation later.
        Math.multiplyExact(Math.multiplyExact((long) maxNumPages, (long) pageSize), bytesPerToken);
    }

    public static KvCacheLayout of(KvCacheConfig config, long bytesPerToken) {
        return new KvCacheLayout(config.pageSize(), config.maxNumPages(), bytesPerToken);
    }

    public long pageBytes() {
        return pageSize * bytesPerToken;
    }

    /** The one device buffer the pool takes: {@code max_num_pages * page_size * bytesPerToken}. */
    public long poolBytes() {
        return maxNumPages * pageBytes();
    }

    /** Pages that {@code tokens} tokens occupy. */
    public int pagesFor(long tokens) {
        return Math.toIntExact((tokens + pageSize - 1) / pageSize);
    }

    public long byteOffset(int page, int slotInPage) {
        return page * pageBytes() + slotInPage * bytesPerToken;
    }
}
