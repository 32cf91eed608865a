package io.mstar.tensor.device;

/**
 * What a device's allocator holds.
 *
 * @param bytesInUse bytes of live buffers (what tensors occupy)
 * @param bytesReserved bytes taken from the underlying memory, including cached free blocks
 * @param allocations buffers handed out since start
 * @param frees buffers returned since start
 * @param cacheHits allocations served from cached blocks (0 for devices without a cache)
 */
public record DeviceMemoryStats(long bytesInUse, long bytesReserved, long allocations, long frees, long cacheHits) {

    public long liveBuffers() {
        return allocations - frees;
    }
}
