package io.mstar.tensor.device.cuda;

import jcuda.Pointer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Page-locked host memory ({@code cuMemHostAlloc}) of a {@link CudaDevice}: the device copies to and from it
 * by DMA without staging, so a producer that writes its bytes here saves one host copy. Closed by whoever
 * asked for it, before the device is closed; the {@link #buffer()} view must not be used after that.
 */
public final class PinnedHostBuffer implements AutoCloseable {

    private final CudaDevice device;
    private final Pointer pointer;
    private final ByteBuffer buffer;
    private boolean closed;

    PinnedHostBuffer(CudaDevice device, Pointer pointer, long bytes) {
        this.device = device;
        this.pointer = pointer;
        this.buffer = pointer.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
    }

    /** A direct buffer over the whole allocation (position 0, limit = capacity). */
    public ByteBuffer buffer() {
        return buffer;
    }

    public long capacity() {
        return buffer.capacity();
    }

    Pointer pointer() {
        return pointer;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            device.freePinned(this);
        }
    }
}
