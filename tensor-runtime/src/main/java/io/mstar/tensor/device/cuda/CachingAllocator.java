package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.DeviceMemoryStats;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Keeps freed device blocks for reuse, keyed by size class, because {@code cuMemAlloc}/{@code cuMemFree}
 * cost microseconds each and {@code cuMemFree} synchronizes the device. Classes: requests up to
 * {@link #SMALL_LIMIT} round up to {@link #SMALL_GRANULARITY}, larger ones to {@link #LARGE_GRANULARITY}.
 * A block is reused only for its own class (no splitting), so a class's cached blocks are interchangeable.
 * When the device is out of memory the cache is emptied and the allocation tried once more.
 *
 * <p>Owned by the device's owner thread; {@link #stats()} may be read from any thread and returns fields
 * that may come from successive moments, never torn values.
 */
final class CachingAllocator {

    static final long SMALL_GRANULARITY = 512;
    static final long SMALL_LIMIT = 1L << 20;
    static final long LARGE_GRANULARITY = 2L << 20;

    /** The memory underneath: {@code cuMemAlloc}/{@code cuMemFree} on a device, a fake in unit tests. */
    interface RawMemory {
        /** A block of {@code bytes}; throws a {@link DeviceException} classified from the driver's result. */
        long allocate(long bytes);

        void free(long address);
    }

    /** One block from the raw memory: its address and its class size. */
    record Block(long address, long size) {
    }

    private final RawMemory raw;
    private final String device;
    private final Map<Long, ArrayDeque<Block>> cached = new HashMap<>();
    // address -> the live block and the bytes asked for
    private final Map<Long, Live> live = new HashMap<>();

    private volatile long bytesInUse;
    private volatile long bytesReserved;
    private volatile long bytesCached;
    private volatile long allocations;
    private volatile long frees;
    private volatile long cacheHits;

    private record Live(Block block, long requested) {
    }

    CachingAllocator(RawMemory raw, String device) {
        this.raw = raw;
        this.device = device;
    }

    static long sizeClass(long nbytes) {
        long n = Math.max(nbytes, 1);
        long granularity = n <= SMALL_LIMIT ? SMALL_GRANULARITY : LARGE_GRANULARITY;
        return Math.addExact(n, granularity - 1) / granularity * granularity;
    }

    /** The address of a block of at least {@code nbytes}, from the cache when its class has one. */
    long allocate(long nbytes) {
        if (nbytes < 0) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device, "negative allocation size " + nbytes);
        }
        long size;
        try {
            size = sizeClass(nbytes);
        } catch (ArithmeticException e) {
            throw new DeviceException(Reason.OUT_OF_MEMORY, device, "allocation of " + nbytes + " bytes");
        }
        ArrayDeque<Block> free = cached.get(size);
        Block block = free == null ? null : free.pollLast();
        if (block != null) {
            cacheHits++;
            bytesCached -= size;
        } else {
            block = new Block(allocateRaw(size), size);
            bytesReserved += size;
        }
        live.put(block.address(), new Live(block, nbytes));
        allocations++;
        bytesInUse += nbytes;
        return block.address();
    }

    private long allocateRaw(long size) {
        try {
            return raw.allocate(size);
        } catch (DeviceException e) {
            if (e.reason() != Reason.OUT_OF_MEMORY || bytesCached == 0) {
                throw e;
            }
            emptyCache();
            return raw.allocate(size);
        }
    }

    /** Returns a live block to its class's cache; an address that is not live (double free) is rejected. */
    void free(long address) {
        Live block = live.remove(address);
        if (block == null) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device,
                    "free of 0x" + Long.toHexString(address) + ", which is not a live allocation (double free?)");
        }
        cached.computeIfAbsent(block.block().size(), k -> new ArrayDeque<>()).addLast(block.block());
        frees++;
        bytesInUse -= block.requested();
        bytesCached += block.block().size();
    }

    boolean isLive(long address) {
        return live.containsKey(address);
    }

    /** Gives every cached block back to the raw memory; live blocks stay. The caller syncs the stream first. */
    void emptyCache() {
        for (ArrayDeque<Block> blocks : cached.values()) {
            for (Block b; (b = blocks.pollLast()) != null; ) {
                raw.free(b.address());
                bytesReserved -= b.size();
                bytesCached -= b.size();
            }
        }
        cached.clear();
    }

    /** Frees everything, live blocks too; returns how many were still live (leaked by their owners). */
    int releaseAll() {
        int leaked = live.size();
        for (Live l : live.values()) {
            raw.free(l.block().address());
            bytesReserved -= l.block().size();
        }
        live.clear();
        bytesInUse = 0;
        emptyCache();
        return leaked;
    }

    long bytesCached() {
        return bytesCached;
    }

    DeviceMemoryStats stats() {
        return new DeviceMemoryStats(bytesInUse, bytesReserved, allocations, frees, cacheHits);
    }
}
