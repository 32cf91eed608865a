package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import jcuda.driver.CUdeviceptr;

/** A live allocation of a {@link CudaDevice}; {@code pointer} is the driver's handle for {@code address}. */
final class CudaBuffer implements DeviceBuffer {

    private final CudaDevice device;
    private final CUdeviceptr pointer;
    private final long address;
    private final long nbytes;

    CudaBuffer(CudaDevice device, CUdeviceptr pointer, long address, long nbytes) {
        this.device = device;
        this.pointer = pointer;
        this.address = address;
        this.nbytes = nbytes;
    }

    @Override
    public long address() {
        return address;
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
        return offset == 0 ? pointer : pointer.withByteOffset(offset);
    }

    @Override
    public String toString() {
        return device.name() + "[0x" + Long.toHexString(address) + ", " + nbytes + " B]";
    }
}
