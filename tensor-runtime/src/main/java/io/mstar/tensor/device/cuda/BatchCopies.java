package io.mstar.tensor.device.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.Transfer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * {@link CudaDevice}'s batches of small copies ({@link Device#copyToHost(List)}): a step of B requests moves a few
 * tensors of a few bytes each, and every copy costs a driver call and a wait. With the runtime's kernels
 * ({@code mstar_scatter_bytes}, {@code mstar_gather_bytes}) a batch is one upload of a header and its bytes, one
 * launch and, for reads, one download, then one wait; with fewer than {@value #MIN_GATHER} copies, or without the
 * kernels (a build without nvcc), one asynchronous copy per transfer, then one wait. A batch that does not fit the
 * pinned staging goes one copy at a time. Called under the device's monitor.
 */
final class BatchCopies implements AutoCloseable {

    private static final int ENTRY_BYTES = 3 * Long.BYTES;
    private static final int BLOCK = 128;
    private static final int MAX_GRID = 1024;
    /** Fewer copies than this go as copies: a launch and the header's upload cost more than they save. */
    private static final int MIN_GATHER = 4;

    private final CudaDevice device;
    private final long capacity;
    private PinnedHostBuffer pinned;
    private CUfunction scatter;
    private CUfunction gather;
    private boolean kernelsLoaded;

    BatchCopies(CudaDevice device, long capacity) {
        this.device = device;
        this.capacity = capacity;
    }

    void toHost(List<Transfer> transfers) {
        Batch b = plan(transfers, false);
        if (b == null) {
            transfers.forEach(t -> device.copyToHost(t.buffer(), t.offset(), t.host()));
            return;
        }
        if (b.entries == 0) {
            return;
        }
        if (b.entries >= MIN_GATHER && kernels()) {
            viaKernel(gather, b, b.headerBytes, true);
        } else {
            copyEach(transfers, b, false);
        }
        ByteBuffer staged = pinned.buffer();
        for (int i = 0; i < transfers.size(); i++) {
            Transfer t = transfers.get(i);
            t.host().slice().put(staged.slice((int) b.dataAt[i], t.host().remaining()));
        }
    }

    void fromHost(List<Transfer> transfers) {
        Batch b = plan(transfers, true);
        if (b == null) {
            transfers.forEach(t -> device.copyFromHost(t.host(), t.buffer(), t.offset()));
            return;
        }
        if (b.entries == 0) {
            return;
        }
        ByteBuffer staged = pinned.buffer();
        for (int i = 0; i < transfers.size(); i++) {
            Transfer t = transfers.get(i);
            staged.slice((int) b.dataAt[i], t.host().remaining()).put(t.host().slice());
        }
        if (b.entries >= MIN_GATHER && kernels()) {
            viaKernel(scatter, b, b.bytes, false);
        } else {
            copyEach(transfers, b, true);
        }
    }

    /**
     * Uploads the staging's first {@code upload} bytes (the header, and for a scatter the bytes too), runs
     * {@code kernel} over the batch and, for a gather, downloads the bytes it collected; then waits.
     */
    private void viaKernel(CUfunction kernel, Batch b, long upload, boolean download) {
        DeviceBuffer scratch = device.allocate(b.bytes);
        try {
            CudaBuffer s = device.owned(scratch);
            device.check(cuMemcpyHtoDAsync(s.pointer(0), pinned.pointer(), upload, device.stream()),
                    "cuMemcpyHtoDAsync");
            device.launch(kernel, grid(b.entries), BLOCK, s.address(), b.entries);
            if (download) {
                device.check(cuMemcpyDtoHAsync(pinned.pointer().withByteOffset(b.headerBytes),
                        s.pointer(b.headerBytes), b.bytes - b.headerBytes, device.stream()), "cuMemcpyDtoHAsync");
            }
            device.synchronize();
        } finally {
            device.free(scratch);
        }
    }

    /** One asynchronous copy per non-empty transfer, between its device range and its bytes in the staging; waits. */
    private void copyEach(List<Transfer> transfers, Batch b, boolean toDevice) {
        for (int i = 0; i < transfers.size(); i++) {
            Transfer t = transfers.get(i);
            int n = t.host().remaining();
            if (n == 0) {
                continue;
            }
            CUdeviceptr d = device.owned(t.buffer()).pointer(t.offset());
            Pointer h = pinned.pointer().withByteOffset(b.dataAt[i]);
            if (toDevice) {
                device.check(cuMemcpyHtoDAsync(d, h, n, device.stream()), "cuMemcpyHtoDAsync");
            } else {
                device.check(cuMemcpyDtoHAsync(h, d, n, device.stream()), "cuMemcpyDtoHAsync");
            }
        }
        device.synchronize();
    }

    /** Where each transfer's bytes go in the staging, after a header of its non-empty ones; null: does not fit. */
    private Batch plan(List<Transfer> transfers, boolean toDevice) {
        int entries = 0;
        long data = 0;
        for (Transfer t : transfers) {
            device.checkTransfer(t, toDevice);
            int n = t.host().remaining();
            entries += n > 0 ? 1 : 0;
            data += n;
        }
        long headerBytes = align((long) entries * ENTRY_BYTES);
        if (headerBytes + data > capacity) {
            return null;
        }
        if (pinned == null) {
            pinned = device.allocatePinned(capacity);
        }
        ByteBuffer header = pinned.buffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long[] dataAt = new long[transfers.size()];
        long at = headerBytes;
        int e = 0;
        for (int i = 0; i < transfers.size(); i++) {
            Transfer t = transfers.get(i);
            int n = t.host().remaining();
            dataAt[i] = at;
            if (n > 0) {
                header.putLong(e * ENTRY_BYTES, t.buffer().address() + t.offset());
                header.putLong(e * ENTRY_BYTES + Long.BYTES, at);
                header.putLong(e * ENTRY_BYTES + 2 * Long.BYTES, n);
                e++;
            }
            at += n;
        }
        return new Batch(entries, headerBytes, at, dataAt);
    }

    private boolean kernels() {
        if (!kernelsLoaded) {
            kernelsLoaded = true;
            String ptx = CudaKernels.ptx();
            if (ptx != null) {
                CUmodule module = device.loadModule(ptx);
                scatter = device.function(module, "mstar_scatter_bytes");
                gather = device.function(module, "mstar_gather_bytes");
            }
        }
        return scatter != null;
    }

    private static int grid(int entries) {
        return Math.min(MAX_GRID, entries);
    }

    private static long align(long bytes) {
        return (bytes + 15) / 16 * 16;
    }

    @Override
    public void close() {
        if (pinned != null) {
            pinned.close();
            pinned = null;
        }
    }

    /** A batch's layout in the staging: {@code entries} header entries, then every transfer's bytes at its offset. */
    private record Batch(int entries, long headerBytes, long bytes, long[] dataAt) {
    }
}
