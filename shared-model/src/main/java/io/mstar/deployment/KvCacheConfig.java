package io.mstar.deployment;

/**
 * Paged KV-cache sizing of a model's autoregressive nodes ({@code kv_cache} in the YAML).
 *
 * @param pageSize tokens per KV page ({@code page_size}); larger pages waste more of the last page per request
 * @param maxNumPages pages allocated per worker ({@code max_num_pages}); bounds device memory used by the cache
 */
public record KvCacheConfig(int pageSize, int maxNumPages) {
}
