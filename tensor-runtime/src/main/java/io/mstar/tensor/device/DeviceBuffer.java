package io.mstar.tensor.device;

/**
 * One allocation on a {@link Device}. {@code address} is what a descriptor publishes
 * ({@code TensorPointerInfo.address}): a device pointer on CUDA, an opaque handle on the host.
 */
public interface DeviceBuffer {

    long address();

    /** Usable bytes (the caller's request); an allocator may reserve more. */
    long nbytes();

    /** The device this buffer belongs to, so a buffer is never freed on another one. */
    Device device();
}
