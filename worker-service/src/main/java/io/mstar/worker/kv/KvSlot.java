package io.mstar.worker.kv;

/**
 * Where one token position of a request lives in the pool.
 *
 * @param position the token's position in the request's sequence
 * @param page the pool page holding it
 * @param slotInPage its slot within the page
 * @param byteOffset its first byte within the pool buffer; on a CUDA device the pool's address plus this is
 *                   the pointer a kernel writes
 */
public record KvSlot(int position, int page, int slotInPage, long byteOffset) {
}
