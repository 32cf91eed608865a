package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.DeviceMemoryStats;
import io.mstar.tensor.device.Transfer;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

import static jcuda.driver.JCudaDriver.*;

/**
 * A GPU through the JCuda driver API: the device's primary context, one non-blocking stream that every
 * operation is issued on, a {@link CachingAllocator}, pinned host buffers, and copies that are synchronous at
 * the {@link Device} interface: single ones through {@link StagedCopies} (pageable memory staged in pinned chunks,
 * pinned memory by DMA directly), batches of small ones through {@link BatchCopies}, moves beside the compute
 * stream's work through {@link CopyStream}.
 *
 * <p>Every driver result is checked ({@code JCudaDriver.setExceptionsEnabled(false)}) and classified by
 * {@link CudaErrors}. A fatal (sticky) error turns the device unhealthy for good: listeners hear it once, the
 * worker flips its liveness, and every later operation fails with {@link Reason#FATAL}.
 *
 * <p>Shared by the engine loop and the worker's step thread (the loop frees and stores tensors while a step
 * runs): every operation takes this device's monitor, so issuing is serialized, and work stays ordered by the
 * one stream. A waiting copy holds the monitor until its bytes are there; an event's wait
 * ({@link CudaEvent#synchronize}) does not. The context is made current once on each thread that calls.
 * {@link #stats()}, {@link #isHealthy()} and the listeners may be used from any thread.
 */
public final class CudaDevice implements Device {

    private static final System.Logger LOG = System.getLogger(CudaDevice.class.getName());

    private final String name;
    private final CudaDeviceSettings settings;
    private final CUdevice cuDevice = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final NativeStream stream = new NativeStream();
    private final CachingAllocator allocator;
    private final List<CUmodule> modules = new ArrayList<>();
    private final List<Consumer<DeviceException>> fatalListeners = new CopyOnWriteArrayList<>();
    private final StagedCopies single;
    private final BatchCopies batches;
    private final CopyStream copies;

    /** Guards the allocator (see {@link #allocate}). */
    private final Object allocation = new Object();
    /** Whether the calling thread has the context current. */
    private final ThreadLocal<Boolean> bound = ThreadLocal.withInitial(() -> false);
    private CudaBlas blas;
    private volatile DeviceException fatal;
    private boolean closed;

    public CudaDevice(int ordinal) {
        this(ordinal, CudaDeviceSettings.defaults());
    }

    public CudaDevice(int ordinal, CudaDeviceSettings settings) {
        this.name = "cuda:" + ordinal;
        this.settings = settings;
        JCudaDriver.setExceptionsEnabled(false);
        check(cuInit(0), "cuInit");
        check(cuDeviceGet(cuDevice, ordinal), "cuDeviceGet(" + ordinal + ")");
        check(cuDevicePrimaryCtxRetain(context, cuDevice), "cuDevicePrimaryCtxRetain");
        bind();
        check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        this.allocator = new CachingAllocator(new RawCudaMemory(), name);
        this.single = new StagedCopies(this, settings);
        // a batch of small copies never needs a whole staging chunk
        this.batches = new BatchCopies(this, Math.min(settings.stagingChunkBytes(), 1L << 20));
        this.copies = new CopyStream(this);
    }

    /** GPUs the driver sees; 0 when there is no driver or no GPU (the worker then uses HostDevice). */
    public static int deviceCount() {
        try {
            JCudaDriver.setExceptionsEnabled(false);
            int[] n = new int[1];
            if (cuInit(0) != 0 || cuDeviceGetCount(n) != 0) {
                return 0;
            }
            return n[0];
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            return 0;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DeviceKind kind() {
        return DeviceKind.CUDA;
    }

    /**
     * Under the allocation lock, not the device's monitor: a thread that waits for the device (a step's read-back
     * holds the monitor until its kernels finish) must not stall another that only takes or returns a cached block,
     * as the engine loop does for every tensor while the step thread runs the next step. Lock order: the monitor,
     * then this lock, never the other way.
     */
    @Override
    public DeviceBuffer allocate(long nbytes) {
        ensureUsable();
        synchronized (allocation) {
            return new CudaBuffer(this, allocator.allocate(nbytes), nbytes);
        }
    }

    /** Under the allocation lock, as {@link #allocate}. */
    @Override
    public void free(DeviceBuffer buffer) {
        synchronized (allocation) {
            CudaBuffer b = owned(buffer);
            // the stream may still use the block: it goes to the cache, and work on the same stream is ordered
            allocator.free(b.block());
            b.markFreed();
        }
    }

    /** Gives cached (free) blocks back to the driver; live buffers stay. */
    public synchronized void emptyCache() {
        ensureUsable();
        synchronize();
        synchronized (allocation) {
            allocator.emptyCache();
        }
    }

    @Override
    public synchronized void copyFromHost(ByteBuffer src, DeviceBuffer dst, long dstOffset) {
        CudaBuffer d = owned(dst);
        ByteBuffer s = src.slice();
        checkRange(d, dstOffset, s.remaining());
        ensureUsable();
        bind();
        if (s.remaining() == 0) {
            return;
        }
        single.fromHost(s, d, dstOffset);
    }

    @Override
    public synchronized void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst) {
        CudaBuffer d = owned(src);
        ByteBuffer t = dst.slice();
        checkRange(d, srcOffset, t.remaining());
        if (t.isReadOnly()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name, "copyToHost into a read-only buffer");
        }
        ensureUsable();
        bind();
        if (t.remaining() == 0) {
            return;
        }
        single.toHost(d, srcOffset, t);
    }

    /** The transfers as one batch ({@link BatchCopies}): one wait for all of them. */
    @Override
    public synchronized void copyToHost(List<Transfer> transfers) {
        ensureUsable();
        bind();
        batches.toHost(transfers);
    }

    /** As {@link #copyToHost(List)}, host to device. */
    @Override
    public synchronized void copyFromHost(List<Transfer> transfers) {
        ensureUsable();
        bind();
        batches.fromHost(transfers);
    }

    /** On the copy stream ({@link CopyStream}), beside the compute stream's work; the wait holds no monitor. */
    @Override
    public void moveToHost(List<Transfer> transfers) {
        copies.move(transfers, false);
    }

    /** As {@link #moveToHost}, host to device. */
    @Override
    public void moveFromHost(List<Transfer> transfers) {
        copies.move(transfers, true);
    }

    /** Bytes moved on the copy stream since start. */
    public long movedBytes() {
        return copies.bytes();
    }

    /** A transfer of a batch names a live buffer of this device and fits it. */
    void checkTransfer(Transfer t, boolean toDevice) {
        checkRange(owned(t.buffer()), t.offset(), t.host().remaining());
        if (!toDevice && t.host().isReadOnly()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name, "copyToHost into a read-only buffer");
        }
    }

    CUstream stream() {
        return stream;
    }

    /**
     * Sets {@code bytes} of {@code buffer} from {@code offset} to zero, ordered on the stream and not waited for:
     * inside a {@link #capture} it becomes a memset node of the graph, where a synchronous copy is not allowed.
     */
    public synchronized void zero(DeviceBuffer buffer, long offset, long bytes) {
        CudaBuffer d = owned(buffer);
        checkRange(d, offset, bytes);
        ensureUsable();
        bind();
        if (bytes > 0) {
            check(cuMemsetD8Async(d.pointer(offset), (byte) 0, bytes, stream), "cuMemsetD8Async");
        }
    }

    /**
     * Copies {@code bytes} from {@code src} at {@code srcOffset} to {@code dst} at {@code dstOffset} (both of this
     * device, ranges not overlapping unless equal), ordered on the stream and not waited for.
     */
    public synchronized void copyWithin(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        CudaBuffer s = owned(src);
        CudaBuffer d = owned(dst);
        checkRange(s, srcOffset, bytes);
        checkRange(d, dstOffset, bytes);
        ensureUsable();
        bind();
        if (bytes > 0 && (s != d || srcOffset != dstOffset)) {
            check(cuMemcpyDtoDAsync(d.pointer(dstOffset), s.pointer(srcOffset), bytes, stream), "cuMemcpyDtoDAsync");
        }
    }

    @Override
    public synchronized void synchronize() {
        ensureUsable();
        bind();
        check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    @Override
    public DeviceMemoryStats stats() {
        return allocator.stats();
    }

    /** Page-locked host memory for producers that can write straight into DMA-able memory. */
    public synchronized PinnedHostBuffer allocatePinned(long bytes) {
        if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name, "pinned buffer size out of (0, 2^31): " + bytes);
        }
        ensureUsable();
        bind();
        Pointer p = new Pointer();
        check(cuMemHostAlloc(p, bytes, 0), "cuMemHostAlloc(" + bytes + ")");
        return new PinnedHostBuffer(this, p, bytes);
    }

    synchronized void freePinned(PinnedHostBuffer buffer) {
        if (fatal == null) {
            bind();
            check(cuMemFreeHost(buffer.pointer()), "cuMemFreeHost");
        }
    }

    /** An event recorded on the device's stream now: complete when everything issued so far is. */
    public synchronized CudaEvent recordEvent() {
        ensureUsable();
        bind();
        CUevent e = new CUevent();
        check(cuEventCreate(e, 0), "cuEventCreate");
        CudaEvent event = new CudaEvent(this, e);
        check(cuEventRecord(e, stream), "cuEventRecord");
        return event;
    }

    /**
     * Runs {@code work} under this device's monitor with the context current on the calling thread, handing it the
     * native handle of the device's stream: how a library outside JCuda (NCCL, through the JavaCPP presets) issues
     * work ordered with every launch and copy, as {@link CudaBlas} does. The work only enqueues; it does not wait for
     * the device, since other threads wait for the monitor meanwhile.
     */
    public synchronized void onStream(LongConsumer work) {
        ensureUsable();
        bind();
        work.accept(stream.address());
    }

    /** Whether {@code buffer} is a live (allocated, not freed) buffer of this device. */
    public synchronized boolean isLive(DeviceBuffer buffer) {
        return buffer instanceof CudaBuffer b && b.device() == this && !b.isFreed();
    }

    /**
     * This device's cuBLAS handle, made at the first call (the libraries load then; see
     * {@link CudaBlas#unavailableReason()}) and closed with the device.
     */
    public synchronized CudaBlas blas() {
        ensureUsable();
        if (blas == null) {
            bind();
            blas = new CudaBlas(this, stream.address());
        }
        return blas;
    }

    /**
     * Captures the work {@code launches} issues on this device's stream into a {@link CudaGraph}, without running it.
     * The work must not copy to or from the host or wait; buffers it uses must outlive the graph.
     */
    public synchronized CudaGraph capture(Runnable launches) {
        ensureUsable();
        bind();
        return CudaGraph.capture(this, stream, launches);
    }

    /** False once a fatal (sticky) error was seen; it never turns true again. */
    public boolean isHealthy() {
        return fatal == null;
    }

    /** Called once, on the thread that saw it, with the first fatal error (the worker flips liveness). */
    public void addFatalListener(Consumer<DeviceException> listener) {
        fatalListeners.add(listener);
    }

    public void removeFatalListener(Consumer<DeviceException> listener) {
        fatalListeners.remove(listener);
    }

    /** Bytes copied through staging and bytes copied by direct DMA from or to pinned memory, since start. */
    public long stagedBytes() {
        return single.stagedBytes();
    }

    public long directBytes() {
        return single.directBytes();
    }

    /**
     * Loads a PTX module into this device's context; it is unloaded when the device closes. Public so that
     * other modules can ship kernels of their own (PTX resources built the way {@link CudaKernels} is).
     */
    public synchronized CUmodule loadModule(String ptx) {
        ensureUsable();
        bind();
        CUmodule module = new CUmodule();
        check(cuModuleLoadData(module, ptx), "cuModuleLoadData");
        modules.add(module);
        return module;
    }

    /** A kernel of a module {@link #loadModule loaded} into this device. */
    public CUfunction function(CUmodule module, String function) {
        CUfunction f = new CUfunction();
        check(cuModuleGetFunction(f, module, function), "cuModuleGetFunction(" + function + ")");
        return f;
    }

    /**
     * Launches a one-dimensional grid on the device's stream, asynchronously (a fault surfaces at the next
     * synchronizing call); every kernel parameter is a 64-bit value.
     */
    public synchronized void launch(CUfunction function, int gridX, int blockX, long... params) {
        ensureUsable();
        bind();
        Pointer[] args = new Pointer[params.length];
        for (int i = 0; i < params.length; i++) {
            args[i] = Pointer.to(new long[] {params[i]});
        }
        check(cuLaunchKernel(function, gridX, 1, 1, blockX, 1, 1, 0, stream, Pointer.to(args), null), "cuLaunchKernel");
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        bind();
        if (fatal == null) {
            try {
                check(cuStreamSynchronize(stream), "cuStreamSynchronize");
                if (blas != null) {
                    blas.close();
                }
                int leaked;
                synchronized (allocation) {
                    leaked = allocator.releaseAll();
                }
                if (leaked > 0) {
                    LOG.log(System.Logger.Level.WARNING, "{0}: {1} buffers still allocated at close, freed", name, leaked);
                }
                batches.close();
                single.releaseStaging();
                for (CUmodule m : modules) {
                    check(cuModuleUnload(m), "cuModuleUnload");
                }
                copies.close();
                check(cuStreamDestroy(stream), "cuStreamDestroy");
            } catch (DeviceException e) {
                LOG.log(System.Logger.Level.WARNING, name + ": error while closing", e);
            }
        }
        single.closeThreads();
        // a context poisoned by a sticky error is destroyed with its last reference
        cuDevicePrimaryCtxRelease(cuDevice);
    }

    /** Makes the device's context current on the calling thread if it is not already. */
    void bind() {
        if (!bound.get()) {
            check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
            bound.set(true);
        }
    }

    /** Throws the classified exception for a failed result; a fatal one first turns the device unhealthy. */
    void check(int result, String operation) {
        if (result == 0) {
            return;
        }
        DeviceException e = CudaErrors.toException(result, name, operation);
        if (e.isFatal()) {
            markFatal(e);
        }
        throw e;
    }

    private void markFatal(DeviceException e) {
        if (fatal != null) {
            return;
        }
        fatal = e;
        LOG.log(System.Logger.Level.ERROR, name + " is unusable: " + e.getMessage());
        for (Consumer<DeviceException> l : fatalListeners) {
            try {
                l.accept(e);
            } catch (RuntimeException listenerFailure) {
                LOG.log(System.Logger.Level.WARNING, "fatal-error listener failed", listenerFailure);
            }
        }
    }

    void ensureUsable() {
        DeviceException f = fatal;
        if (f != null) {
            throw new DeviceException(Reason.FATAL, name, "device unusable since an earlier fatal error", f);
        }
        if (closed) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name, "device is closed");
        }
    }

    CudaBuffer owned(DeviceBuffer buffer) {
        if (!(buffer instanceof CudaBuffer b) || b.device() != this) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name,
                    "buffer " + buffer + " belongs to " + (buffer == null ? "nobody" : buffer.device().name()) + " (another device)");
        }
        if (b.isFreed()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name, "buffer " + b + " was already freed");
        }
        return b;
    }

    private void checkRange(CudaBuffer b, long offset, long n) {
        if (offset < 0 || offset > b.nbytes() - n) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, name,
                    "range [" + offset + ", +" + n + ") outside buffer " + b);
        }
    }

    /** Whether host memory is page-locked (allocated or registered with the driver), so DMA can read it. */
    boolean isPinned(ByteBuffer b) {
        if (!b.isDirect()) {
            return false;
        }
        // only pinned memory has a device mapping; anything else answers CUDA_ERROR_INVALID_VALUE
        return cuMemHostGetDevicePointer(new CUdeviceptr(), Pointer.to(b), 0) == 0;
    }

    /** cuMemAlloc/cuMemFree, remembering each block's driver handle. */
    private final class RawCudaMemory implements CachingAllocator.RawMemory {
        @Override
        public CachingAllocator.Block allocate(long bytes) {
            bind();
            DevicePointer p = new DevicePointer();
            check(cuMemAlloc(p, bytes), "cuMemAlloc(" + bytes + ")");
            return new CachingAllocator.Block(p.address(), bytes, p);
        }

        @Override
        public void free(CachingAllocator.Block block) {
            bind();
            check(cuMemFree((DevicePointer) block.handle), "cuMemFree");
        }
    }
}
