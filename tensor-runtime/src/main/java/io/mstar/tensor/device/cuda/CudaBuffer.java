package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import jcuda.driver.CUdeviceptr;

/** A live allocation of a {@link CudaDevice}; {@code pointer} is the driver's handle for {@code address}. */
final class CudaBuffer implements DeviceBuffer {

    private final CudaDevice device;
    private final CachingAllocator.Block block;
    private final long nbytes;
    // a block outlives its buffers (it is cached and handed out again), so freed-ness is the buffer's
    private volatile boolean freed;

    CudaBuffer(CudaDevice device, CachingAllocator.Block block, long nbytes) {
        this.device = device;
        this.block = block;
        this.nbytes = nbytes;
    }

    @Override
    public long address() {
        return block.address;
    }

    @Override
    public long nbytes() {
        return nbytes;
    }

    @Override
    public Device device() {
        return device;
    }

    CUdeviceptr pointer(long offset) {
        CUdeviceptr pointer = (CUdeviceptr) block.handle;
        return offset == 0 ? pointer : pointer.withByteOffset(offset);
    }

    CachingAllocator.Block block() {
        return block;
    }

    boolean isFreed() {
        return freed;
    }

    void markFreed() {
        freed = true;
    }

    @Override
    public String toString() {
        return device.name() + "[0x" + Long.toHexString(block.address) + ", " + nbytes + " B]";
    }
}
