package io.mstar.tensor.device;

import java.nio.ByteBuffer;

/**
 * One allocation of a {@link HostDevice}: off-heap bytes the arena and the tensor transport can read
 * through {@link #bytes()} without a device copy.
 *
 * <p>{@link #address()} is an opaque handle, not a native pointer: unique among this device's buffers for the
 * life of the process (never reused, so a stale descriptor can never name a newer buffer).
 */
public final class HostBuffer implements DeviceBuffer {

    private final HostDevice device;
    private final long address;
    private final ByteBuffer memory;
    /** Written by the owner under the device's lock; read by {@link #bytes()} from any thread. */
    private volatile boolean freed;

    HostBuffer(HostDevice device, long address, ByteBuffer memory) {
        this.device = device;
        this.address = address;
        this.memory = memory;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long nbytes() {
        return memory.capacity();
    }

    @Override
    public Device device() {
        return device;
    }

    /**
     * A fresh view of the whole buffer (position 0, limit {@link #nbytes()}), independent of other views'
     * positions. A view taken before {@link Device#free} stays memory-safe afterwards (the JVM reclaims the
     * bytes only once no view is reachable), but its contents are no longer the tensor's: a reader that can
     * outlive the tensor pins it instead.
     *
     * @throws DeviceException INVALID_ARGUMENT once the buffer has been freed
     */
    public ByteBuffer bytes() {
        if (freed) {
            throw new DeviceException(DeviceException.Reason.INVALID_ARGUMENT, device.name(),
                    "buffer " + address + " was freed");
        }
        return memory.duplicate();
    }

    boolean isFreed() {
        return freed;
    }

    void markFreed() {
        freed = true;
    }

    ByteBuffer memory() {
        return memory;
    }

    @Override
    public String toString() {
        return "HostBuffer[" + device.name() + ", address=" + address + ", nbytes=" + nbytes()
                + (freed ? ", freed" : "") + "]";
    }
}
