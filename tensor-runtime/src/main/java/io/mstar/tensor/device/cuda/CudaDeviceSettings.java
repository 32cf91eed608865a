package io.mstar.tensor.device.cuda;

/**
 * How a {@link CudaDevice} stages copies of ordinary (pageable) host memory.
 *
 * @param stagingChunkBytes size of each of the two pinned staging buffers (default 16 MiB): larger chunks
 *        amortize per-chunk overhead, smaller ones start the DMA sooner and pin less host memory
 * @param stagingThreads threads that copy between pageable memory and staging (default 8, the caller's
 *        thread included): one thread copies slower than the PCIe link
 */
public record CudaDeviceSettings(long stagingChunkBytes, int stagingThreads) {

    public CudaDeviceSettings {
        if (stagingChunkBytes < 4096 || stagingChunkBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("stagingChunkBytes out of [4096, 2^31): " + stagingChunkBytes);
        }
        if (stagingThreads < 1) {
            throw new IllegalArgumentException("stagingThreads must be at least 1: " + stagingThreads);
        }
    }

    public static CudaDeviceSettings defaults() {
        return new CudaDeviceSettings(16L << 20, 8);
    }
}
