package io.mstar.tensor.device;

import java.nio.ByteBuffer;

import static io.mstar.tensor.device.DeviceException.Reason.INVALID_ARGUMENT;
import static io.mstar.tensor.device.DeviceException.Reason.OUT_OF_MEMORY;

import org.agrona.collections.Long2ObjectHashMap;

import io.mstar.tensor.LongKeys;

/**
 * Host memory as a {@link Device}: what a worker runs on when no GPU is found, and what tests run on.
 *
 * <p>Buffers are direct {@link ByteBuffer}s, so the bytes are off-heap and a {@link HostBuffer#bytes()} view
 * can be handed to a channel or the arena without a copy. A direct buffer holds at most
 * {@link Integer#MAX_VALUE} bytes; a larger request is an INVALID_ARGUMENT, not an OUT_OF_MEMORY, since no
 * amount of freeing would make it fit.
 *
 * <p>{@link #free} does not release the memory eagerly (no {@code Unsafe.invokeCleaner}): a view a reader
 * still holds would then point at freed native memory and could crash the JVM. The buffer is instead
 * unregistered and its bytes left to the garbage collector, which the JDK triggers itself when direct memory
 * runs short. Accounting ({@link #stats()}, {@code capacity}) follows the free at once.
 *
 * <p>Thread-safe, unlike the {@link Device} default: allocation and free take this device's lock (a map put
 * and a counter, nothing slower), so the arena or transport may free a buffer it was handed. {@link #stats()}
 * reads a published snapshot.
 */
public final class HostDevice implements Device {

    /** The label a host device uses in metrics and logs. */
    public static final String NAME = "host";

    private static final long MAX_BUFFER_BYTES = Integer.MAX_VALUE;

    private final String name;
    private final long capacityBytes;
    private final Long2ObjectHashMap<HostBuffer> live = LongKeys.map();
    private long nextAddress = 1;
    private long bytesInUse;
    private long allocations;
    private long frees;
    private boolean closed;
    private volatile DeviceMemoryStats stats = new DeviceMemoryStats(0, 0, 0, 0, 0);

    /** A host device limited only by the JVM's direct memory. */
    public HostDevice() {
        this(NAME, Long.MAX_VALUE);
    }

    /**
     * @param name label for metrics and logs ({@link #NAME} unless several host devices coexist)
     * @param capacityBytes most bytes live at once; an allocation past it is OUT_OF_MEMORY
     */
    public HostDevice(String name, long capacityBytes) {
        if (capacityBytes < 0) {
            throw new IllegalArgumentException("capacityBytes must be >= 0: " + capacityBytes);
        }
        this.name = name;
        this.capacityBytes = capacityBytes;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DeviceKind kind() {
        return DeviceKind.HOST;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** A zero-filled buffer of exactly {@code nbytes} (zero bytes is allowed: an empty tensor). */
    @Override
    public synchronized HostBuffer allocate(long nbytes) {
        checkOpen();
        if (nbytes < 0 || nbytes > MAX_BUFFER_BYTES) {
            throw new DeviceException(INVALID_ARGUMENT, name,
                    "cannot allocate " + nbytes + " bytes (0.." + MAX_BUFFER_BYTES + " on a host device)");
        }
        if (nbytes > capacityBytes - bytesInUse) {
            throw new DeviceException(OUT_OF_MEMORY, name, "allocating " + nbytes + " bytes with " + bytesInUse
                    + " of " + capacityBytes + " in use");
        }
        ByteBuffer memory;
        try {
            memory = ByteBuffer.allocateDirect((int) nbytes);
        } catch (OutOfMemoryError e) {
            // Direct memory (-XX:MaxDirectMemorySize) is exhausted even after the GC the JDK ran for us.
            throw new DeviceException(OUT_OF_MEMORY, name, "direct memory exhausted allocating " + nbytes, e);
        }
        HostBuffer buffer = new HostBuffer(this, nextAddress++, memory);
        live.put(buffer.address(), buffer);
        bytesInUse += nbytes;
        allocations++;
        publishStats();
        return buffer;
    }

    @Override
    public synchronized void free(DeviceBuffer buffer) {
        HostBuffer host = own(buffer, "free");
        live.remove(host.address());
        host.markFreed();
        bytesInUse -= host.nbytes();
        frees++;
        publishStats();
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst) {
        if (dst.isReadOnly()) {
            throw new DeviceException(INVALID_ARGUMENT, name, "copyToHost into a read-only buffer");
        }
        ByteBuffer from = slice(own(src, "copyToHost"), srcOffset, dst.remaining());
        // Through a slice, so the caller's position stays where it was (as CudaDevice does).
        dst.slice().put(from);
    }

    @Override
    public void copyFromHost(ByteBuffer src, DeviceBuffer dst, long dstOffset) {
        ByteBuffer to = slice(own(dst, "copyFromHost"), dstOffset, src.remaining());
        to.put(src.slice());
    }

    /** Deliberately a no-op: host copies complete before they return. */
    @Override
    public void synchronize() {
    }

    @Override
    public DeviceMemoryStats stats() {
        return stats;
    }

    /** Whether {@code buffer} is a live buffer of this device. */
    public synchronized boolean isLive(DeviceBuffer buffer) {
        return buffer instanceof HostBuffer host && live.get(host.address()) == host;
    }

    /**
     * Forgets every live buffer, logging any still allocated as leaked. Idempotent. Memory is left to the
     * garbage collector as with {@link #free}.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!live.isEmpty()) {
            System.getLogger(HostDevice.class.getName()).log(System.Logger.Level.WARNING,
                    "{0}: closing with {1} buffer(s), {2} bytes, still allocated (leaked)",
                    name, live.size(), bytesInUse);
        }
        for (HostBuffer buffer : live.values()) {
            buffer.markFreed();
        }
        live.clear();
    }

    private HostBuffer own(DeviceBuffer buffer, String op) {
        if (!(buffer instanceof HostBuffer host) || host.device() != this) {
            throw new DeviceException(INVALID_ARGUMENT, name, op + ": buffer of another device: " + buffer);
        }
        synchronized (this) {
            if (live.get(host.address()) != host) {
                throw new DeviceException(INVALID_ARGUMENT, name, op + ": buffer not live (double free?): " + host);
            }
        }
        return host;
    }

    private ByteBuffer slice(HostBuffer buffer, long offset, int n) {
        if (offset < 0 || offset > buffer.nbytes() - n) {
            throw new DeviceException(INVALID_ARGUMENT, name, "range [" + offset + ", " + offset + " + " + n
                    + ") outside buffer of " + buffer.nbytes() + " bytes");
        }
        return buffer.memory().duplicate().position((int) offset).limit((int) offset + n);
    }

    private void checkOpen() {
        if (closed) {
            throw new DeviceException(INVALID_ARGUMENT, name, "device closed");
        }
    }

    private void publishStats() {
        stats = new DeviceMemoryStats(bytesInUse, bytesInUse, allocations, frees, 0);
    }
}
