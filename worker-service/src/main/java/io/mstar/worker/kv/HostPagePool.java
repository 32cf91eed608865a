package io.mstar.worker.kv;

import java.nio.ByteBuffer;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.PinnedHostBuffer;

/**
 * Host memory for a KV cache's offloaded pages (docs/streaming-and-kv.md#offload-and-reload): page-major like the
 * device pool, so a page moves in one contiguous copy; page-locked on a {@link CudaDevice}, so that copy is DMA,
 * off-heap on a host device. Pages are handed out by a {@link PageAllocator} of its own. Owned by the engine loop,
 * through its {@link KvCache}.
 */
public final class HostPagePool implements AutoCloseable {

    private final long pageBytes;
    private final PageAllocator pages;
    private final ByteBuffer memory;
    private final PinnedHostBuffer pinned;

    private HostPagePool(int totalPages, long pageBytes, ByteBuffer memory, PinnedHostBuffer pinned) {
        this.pageBytes = pageBytes;
        this.pages = new PageAllocator(totalPages);
        this.memory = memory;
        this.pinned = pinned;
    }

    /**
     * {@code totalPages} host pages of {@code pageBytes} for a cache on {@code device}; none when 0.
     *
     * @throws IllegalArgumentException when the pool would not fit one buffer (2 GiB): a setting to lower
     */
    public static HostPagePool of(Device device, int totalPages, long pageBytes) {
        long bytes = Math.multiplyExact((long) totalPages, pageBytes);
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a host page pool of " + totalPages + " pages of " + pageBytes
                    + " bytes is " + bytes + " bytes, over the 2 GiB one pool can hold: lower"
                    + " mstar.worker.engine.kv-host-pool-factor");
        }
        if (bytes == 0) {
            return new HostPagePool(0, pageBytes, ByteBuffer.allocateDirect(0), null);
        }
        if (device instanceof CudaDevice cuda) {
            PinnedHostBuffer pinned = cuda.allocatePinned(bytes);
            return new HostPagePool(totalPages, pageBytes, pinned.buffer(), pinned);
        }
        return new HostPagePool(totalPages, pageBytes, ByteBuffer.allocateDirect((int) bytes), null);
    }

    /** {@code n} free host pages, now taken; OUT_OF_PAGES (nothing taken) when fewer are free. */
    int[] allocate(int n, String requestId) {
        return pages.allocate(n, requestId);
    }

    void free(int[] taken, String requestId) {
        pages.free(taken, requestId);
    }

    int freePages() {
        return pages.freePages();
    }

    /** Page {@code page}'s bytes, a view of its own (position 0, limit the page size). */
    ByteBuffer page(int page) {
        int from = Math.toIntExact(page * pageBytes);
        return memory.duplicate().position(from).limit(Math.toIntExact(from + pageBytes)).slice();
    }

    public PageAllocatorStats stats() {
        return pages.stats();
    }

    /** Frees the memory; the cache that owns it has released every page first. */
    @Override
    public void close() {
        if (pinned != null) {
            pinned.close();
        }
    }
}
