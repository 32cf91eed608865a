package io.mstar.tensor.device.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import java.nio.ByteBuffer;

import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * {@link CudaDevice}'s single copies between a host buffer and the device, synchronous at the interface: pinned host
 * memory is copied by DMA directly; pageable memory goes through two pinned staging buffers in chunks, so that the
 * host copy of one chunk ({@link ParallelCopy}, over several threads for large chunks) overlaps the DMA of the other.
 * The staging buffers are made at the first staged copy. Called under the device's monitor; the byte counts may be
 * read from any thread.
 */
final class StagedCopies {

    private final CudaDevice device;
    private final long chunkBytes;
    private final ParallelCopy hostCopy;
    private PinnedHostBuffer[] staging;
    private CUevent[] stagingDone;
    private volatile long stagedBytes;
    private volatile long directBytes;

    StagedCopies(CudaDevice device, CudaDeviceSettings settings) {
        this.device = device;
        this.chunkBytes = settings.stagingChunkBytes();
        this.hostCopy = new ParallelCopy(settings.stagingThreads(), "mstar-" + device.name().replace(':', '-'));
    }

    /** Copies all of {@code s} to {@code d} at {@code dstOffset} (checked by the caller) and waits for it. */
    void fromHost(ByteBuffer s, CudaBuffer d, long dstOffset) {
        if (device.isPinned(s)) {
            device.check(cuMemcpyHtoDAsync(d.pointer(dstOffset), Pointer.to(s), s.remaining(), device.stream()),
                    "cuMemcpyHtoDAsync");
            device.synchronize();
            directBytes += s.remaining();
            return;
        }
        ensureStaging();
        int chunk = (int) chunkBytes;
        boolean[] inFlight = new boolean[2];
        for (int off = 0, i = 0; off < s.remaining(); off += chunk, i ^= 1) {
            int n = Math.min(chunk, s.remaining() - off);
            if (inFlight[i]) {
                device.check(cuEventSynchronize(stagingDone[i]), "cuEventSynchronize");
            }
            hostCopy.copy(s.slice(off, n), staging[i].buffer());
            device.check(cuMemcpyHtoDAsync(d.pointer(dstOffset + off), staging[i].pointer(), n, device.stream()),
                    "cuMemcpyHtoDAsync");
            device.check(cuEventRecord(stagingDone[i], device.stream()), "cuEventRecord");
            inFlight[i] = true;
        }
        device.synchronize();
        stagedBytes += s.remaining();
    }

    /** Copies {@code t.remaining()} bytes of {@code d} from {@code srcOffset} into {@code t} (checked by the caller). */
    void toHost(CudaBuffer d, long srcOffset, ByteBuffer t) {
        int total = t.remaining();
        if (device.isPinned(t)) {
            device.check(cuMemcpyDtoHAsync(Pointer.to(t), d.pointer(srcOffset), total, device.stream()),
                    "cuMemcpyDtoHAsync");
            device.synchronize();
            directBytes += total;
            return;
        }
        ensureStaging();
        int chunk = (int) chunkBytes;
        int chunks = (total + chunk - 1) / chunk;
        // chunk k lands in staging[k % 2]; the DMA of chunk k+1 runs while chunk k is copied out
        for (int k = 0; k < Math.min(2, chunks); k++) {
            issueDtoH(d, srcOffset, k, chunk, total);
        }
        for (int k = 0; k < chunks; k++) {
            int i = k & 1;
            int off = k * chunk;
            int n = Math.min(chunk, total - off);
            device.check(cuEventSynchronize(stagingDone[i]), "cuEventSynchronize");
            hostCopy.copy(staging[i].buffer().slice(0, n), t.slice(off, n));
            if (k + 2 < chunks) {
                issueDtoH(d, srcOffset, k + 2, chunk, total);
            }
        }
        stagedBytes += total;
    }

    private void issueDtoH(CudaBuffer src, long srcOffset, int k, int chunk, int total) {
        int i = k & 1;
        long off = (long) k * chunk;
        int n = (int) Math.min(chunk, total - off);
        device.check(cuMemcpyDtoHAsync(staging[i].pointer(), src.pointer(srcOffset + off), n, device.stream()),
                "cuMemcpyDtoHAsync");
        device.check(cuEventRecord(stagingDone[i], device.stream()), "cuEventRecord");
    }

    private void ensureStaging() {
        if (staging == null) {
            PinnedHostBuffer[] s = new PinnedHostBuffer[2];
            CUevent[] e = new CUevent[2];
            for (int i = 0; i < 2; i++) {
                s[i] = device.allocatePinned(chunkBytes);
                e[i] = new CUevent();
                device.check(cuEventCreate(e[i], CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
            }
            staging = s;
            stagingDone = e;
        }
    }

    long stagedBytes() {
        return stagedBytes;
    }

    long directBytes() {
        return directBytes;
    }

    /** Frees the staging buffers and their events, on a healthy device before its stream goes. */
    void releaseStaging() {
        if (staging != null) {
            for (int i = 0; i < 2; i++) {
                staging[i].close();
                device.check(cuEventDestroy(stagingDone[i]), "cuEventDestroy");
            }
            staging = null;
        }
    }

    /** Stops the host copy threads; on every close, healthy device or not. */
    void closeThreads() {
        hostCopy.close();
    }
}
