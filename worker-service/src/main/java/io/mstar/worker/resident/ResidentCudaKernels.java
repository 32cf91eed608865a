package io.mstar.worker.resident;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.cuda.CudaDevice;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * Resident planning's kernels on a GPU ({@code src/main/cuda/resident_kernels.cu}): the upload's apply, the narrow
 * commits every resource shares (add, last-page fill, store), and the sampler's draw. Each reads the step's upload
 * for its rows, so one capture serves every batch its size pads to.
 */
public final class ResidentCudaKernels implements ResidentKernels {

    static final String PTX_RESOURCE = "resident_kernels.ptx";
    private static final int APPLY_BLOCKS = 32;
    private static final int THREADS = 128;

    private final CudaDevice device;
    private final CUfunction apply;
    private final CUfunction add;
    private final CUfunction fill;
    private final CUfunction store;
    private final CUfunction sample;
    private final int maxRows;
    private final DeviceBuffer tableAddresses;

    private ResidentCudaKernels(CudaDevice device, CUmodule module, int maxRows, List<ResidentTable> tables) {
        this.device = device;
        this.apply = device.function(module, "resident_apply");
        this.add = device.function(module, "resident_add");
        this.fill = device.function(module, "resident_fill");
        this.store = device.function(module, "resident_store");
        this.sample = device.function(module, "resident_sample");
        this.maxRows = maxRows;
        ByteBuffer addresses = ByteBuffer.allocateDirect(tables.size() * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        tables.forEach(t -> addresses.putLong(t.buffer().address()));
        addresses.flip();
        this.tableAddresses = device.allocate(tables.size() * (long) Long.BYTES);
        device.copyFromHost(addresses, tableAddresses, 0);
    }

    /** Loads the kernels and uploads the tables' addresses (the apply kernel's table index). */
    static ResidentCudaKernels load(CudaDevice device, int maxRows, List<ResidentTable> tables) {
        String ptx;
        try (InputStream in = ResidentCudaKernels.class.getResourceAsStream(PTX_RESOURCE)) {
            if (in == null) {
                throw new DeviceException(DeviceException.Reason.INVALID_ARGUMENT, device.name(),
                        "resident kernels unavailable: this build has no PTX (nvcc was not on the PATH)");
            }
            ptx = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ResidentCudaKernels(device, device.loadModule(ptx), maxRows, tables);
    }

    /** Whether this build carries the PTX. */
    public static boolean available() {
        return ResidentCudaKernels.class.getResource(PTX_RESOURCE) != null;
    }

    @Override
    public void apply(DeviceBuffer upload) {
        device.launch(apply, APPLY_BLOCKS, THREADS, upload.address(), tableAddresses.address(), maxRows);
    }

    /** {@code table[slot][column] += delta} for every real row of the step. */
    @Override
    public void add(DeviceBuffer upload, ResidentTable table, int column, int delta) {
        device.launch(add, 1, THREADS, upload.address(), table.buffer().address(), table.width(), column, delta);
    }

    /** A last-page fill cell after one more position. */
    @Override
    public void fill(DeviceBuffer upload, ResidentTable table, int column, int pageSize) {
        device.launch(fill, 1, THREADS, upload.address(), table.buffer().address(), table.width(), column, pageSize);
    }

    /** {@code table[slot][column] = values[row]} for every real row. */
    @Override
    public void store(DeviceBuffer upload, ResidentTable table, int column, DeviceBuffer values) {
        device.launch(store, 1, THREADS, upload.address(), table.buffer().address(), table.width(), column,
                values.address());
    }

    @Override
    public void close() {
        device.free(tableAddresses);
    }

    /** Each real row's token from {@code logits} ({@code padded x vocab} floats) by its sampler cells. */
    public void sample(DeviceBuffer upload, ResidentTable narrow, int firstColumn, DeviceBuffer logits, int vocab,
            int padded, DeviceBuffer sampled) {
        device.launch(sample, padded, THREADS, upload.address(), narrow.buffer().address(), narrow.width(),
                firstColumn, logits.address(), vocab, sampled.address());
    }
}
