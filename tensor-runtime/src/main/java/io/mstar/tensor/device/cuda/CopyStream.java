package io.mstar.tensor.device.cuda;

import java.util.List;

import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

import io.mstar.tensor.device.Transfer;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

/**
 * {@link CudaDevice}'s copy stream (docs/tensor-runtime.md#the-copy-stream): moves between device buffers and
 * page-locked host memory that run beside the compute stream's work rather than behind it, for bytes no running work
 * reads or writes (a KV page offloaded or reloaded while a step runs). Copies are issued under the device's monitor and
 * waited for without it, so a step thread goes on issuing meanwhile.
 */
final class CopyStream implements AutoCloseable {

    private final CudaDevice device;
    private final CUstream stream = new CUstream();
    private volatile long bytes;

    /** Creates the stream; the device's context is current on the calling thread. */
    CopyStream(CudaDevice device) {
        this.device = device;
        device.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate(copy)");
    }

    /**
     * Moves the transfers and returns once their bytes are there. A host buffer that is not page-locked cannot be
     * DMA'd beside other work: such a batch takes the device's ordinary copies instead.
     */
    void move(List<Transfer> transfers, boolean toDevice) {
        CUevent done;
        synchronized (device) {
            device.ensureUsable();
            device.bind();
            for (Transfer t : transfers) {
                device.checkTransfer(t, toDevice);
            }
            if (!transfers.stream().allMatch(t -> device.isPinned(t.host()))) {
                if (toDevice) {
                    device.copyFromHost(transfers);
                } else {
                    device.copyToHost(transfers);
                }
                return;
            }
            done = issue(transfers, toDevice);
        }
        try {
            device.bind();
            device.check(cuEventSynchronize(done), "cuEventSynchronize(copy)");
        } finally {
            synchronized (device) {
                device.check(cuEventDestroy(done), "cuEventDestroy");
            }
        }
    }

    /**
     * Issues every transfer (each host buffer page-locked, each range checked by the caller) and answers an event
     * recorded after them, which the caller waits for and destroys.
     */
    private CUevent issue(List<Transfer> transfers, boolean toDevice) {
        long moved = 0;
        for (Transfer t : transfers) {
            int n = t.host().remaining();
            if (n == 0) {
                continue;
            }
            CudaBuffer b = device.owned(t.buffer());
            Pointer host = Pointer.to(t.host().slice());
            device.check(toDevice ? cuMemcpyHtoDAsync(b.pointer(t.offset()), host, n, stream)
                    : cuMemcpyDtoHAsync(host, b.pointer(t.offset()), n, stream), toDevice ? "cuMemcpyHtoDAsync(copy)"
                    : "cuMemcpyDtoHAsync(copy)");
            moved += n;
        }
        CUevent done = new CUevent();
        device.check(cuEventCreate(done, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        device.check(cuEventRecord(done, stream), "cuEventRecord(copy)");
        bytes += moved;
        return done;
    }

    /** Bytes moved on this stream since start. */
    long bytes() {
        return bytes;
    }

    @Override
    public void close() {
        device.check(cuStreamDestroy(stream), "cuStreamDestroy(copy)");
    }
}
