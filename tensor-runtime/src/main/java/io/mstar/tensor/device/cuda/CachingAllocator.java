package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.DeviceMemoryStats;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps freed device blocks for reuse, keyed by size class, because {@code cuMemAlloc}/{@code cuMemFree}
 * cost microseconds each and {@code cuMemFree} synchronizes the device. Classes: requests up to
 * {@link #SMALL_LIMIT} round up to {@link #SMALL_GRANULARITY}, larger ones to {@link #LARGE_GRANULARITY}.
 * A block is reused only for its own class (no splitting), so a class's cached blocks are interchangeable.
 * When the device is out of memory the cache is emptied and the allocation tried once more.
 *
 * <p>The hot path hashes nothing: small classes index an array, live blocks sit on an intrusive list (for
 * the leak sweep at close), and counters are release-stores (plain stores on x86) rather than volatile
 * writes. Guarded by the device's allocation lock; {@link #stats()} may be read from any thread and returns
 * fields that may come from successive moments, never torn values.
 */
final class CachingAllocator {

    static final long SMALL_GRANULARITY = 512;
    static final long SMALL_LIMIT = 1L << 20;
    static final long LARGE_GRANULARITY = 2L << 20;

    /** The memory underneath: {@code cuMemAlloc}/{@code cuMemFree} on a device, a fake in unit tests. */
    interface RawMemory {
        /** A block of {@code size} bytes; throws a {@link DeviceException} classified from the driver's result. */
        Block allocate(long size);

        void free(Block block);
    }

    /** One block of raw memory: its address, class size and the raw memory's handle; identity matters. */
    static final class Block {
        final long address;
        final long size;
        final Object handle;
        long requested;
        boolean live;
        Block prev;
        Block next;

        Block(long address, long size, Object handle) {
            this.address = address;
            this.size = size;
            this.handle = handle;
        }
    }

    private final RawMemory raw;
    private final String device;
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Block>[] small = new ArrayDeque[(int) (SMALL_LIMIT / SMALL_GRANULARITY) + 1];
    private final Map<Long, ArrayDeque<Block>> large = new HashMap<>();
    private Block liveHead;
    private int liveCount;

    private final AtomicLong bytesInUse = new AtomicLong();
    private final AtomicLong bytesReserved = new AtomicLong();
    private final AtomicLong bytesCached = new AtomicLong();
    private final AtomicLong allocations = new AtomicLong();
    private final AtomicLong frees = new AtomicLong();
    private final AtomicLong cacheHits = new AtomicLong();

    CachingAllocator(RawMemory raw, String device) {
        this.raw = raw;
        this.device = device;
    }

    static long sizeClass(long nbytes) {
        long n = Math.max(nbytes, 1);
        long granularity = n <= SMALL_LIMIT ? SMALL_GRANULARITY : LARGE_GRANULARITY;
        return Math.addExact(n, granularity - 1) / granularity * granularity;
    }

    /** A live block of at least {@code nbytes}, from the cache when its class has one. */
    Block allocate(long nbytes) {
        if (nbytes < 0) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device, "negative allocation size " + nbytes);
        }
        long size;
        try {
            size = sizeClass(nbytes);
        } catch (ArithmeticException e) {
            throw new DeviceException(Reason.OUT_OF_MEMORY, device, "allocation of " + nbytes + " bytes");
        }
        ArrayDeque<Block> free = cache(size, false);
        Block block = free == null ? null : free.pollLast();
        if (block != null) {
            add(cacheHits, 1);
            add(bytesCached, -size);
        } else {
            block = allocateRaw(size);
            add(bytesReserved, size);
        }
        block.requested = nbytes;
        block.live = true;
        block.prev = null;
        block.next = liveHead;
        if (liveHead != null) {
            liveHead.prev = block;
        }
        liveHead = block;
        liveCount++;
        add(allocations, 1);
        add(bytesInUse, nbytes);
        return block;
    }

    private Block allocateRaw(long size) {
        try {
            return raw.allocate(size);
        } catch (DeviceException e) {
            if (e.reason() != Reason.OUT_OF_MEMORY || bytesCached.get() == 0) {
                throw e;
            }
            emptyCache();
            return raw.allocate(size);
        }
    }

    /** Returns a live block to its class's cache; a block that is not live (a double free) is rejected. */
    void free(Block block) {
        if (!block.live) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device,
                    "free of 0x" + Long.toHexString(block.address) + ", which is not a live allocation (double free?)");
        }
        unlink(block);
        cache(block.size, true).addLast(block);
        add(frees, 1);
        add(bytesInUse, -block.requested);
        add(bytesCached, block.size);
    }

    /** Gives every cached block back to the raw memory; live blocks stay. The caller syncs the stream first. */
    void emptyCache() {
        for (ArrayDeque<Block> blocks : small) {
            drain(blocks);
        }
        for (ArrayDeque<Block> blocks : large.values()) {
            drain(blocks);
        }
        large.clear();
    }

    private void drain(ArrayDeque<Block> blocks) {
        if (blocks == null) {
            return;
        }
        for (Block b; (b = blocks.pollLast()) != null; ) {
            raw.free(b);
            add(bytesReserved, -b.size);
            add(bytesCached, -b.size);
        }
    }

    /** Frees everything, live blocks too; returns how many were still live (leaked by their owners). */
    int releaseAll() {
        int leaked = liveCount;
        while (liveHead != null) {
            Block b = liveHead;
            unlink(b);
            raw.free(b);
            add(bytesReserved, -b.size);
            add(bytesInUse, -b.requested);
        }
        emptyCache();
        return leaked;
    }

    int liveBlocks() {
        return liveCount;
    }

    DeviceMemoryStats stats() {
        return new DeviceMemoryStats(bytesInUse.get(), bytesReserved.get(), allocations.get(), frees.get(), cacheHits.get());
    }

    private void unlink(Block b) {
        if (b.prev != null) {
            b.prev.next = b.next;
        } else {
            liveHead = b.next;
        }
        if (b.next != null) {
            b.next.prev = b.prev;
        }
        b.prev = null;
        b.next = null;
        b.live = false;
        liveCount--;
    }

    private ArrayDeque<Block> cache(long size, boolean create) {
        if (size <= SMALL_LIMIT) {
            int i = (int) (size / SMALL_GRANULARITY);
            ArrayDeque<Block> q = small[i];
            if (q == null && create) {
                q = small[i] = new ArrayDeque<>();
            }
            return q;
        }
        return create ? large.computeIfAbsent(size, k -> new ArrayDeque<>()) : large.get(size);
    }

    /** Single writer: a release-store of the new value is enough for readers on other threads. */
    private static void add(AtomicLong counter, long delta) {
        counter.lazySet(counter.get() + delta);
    }
}
