package io.mstar.worker.kernel.minilm;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.OwnedBuffers;

/**
 * The encoder's working buffers for up to {@code batch} sentences and {@code rows} token rows, kept from batch to
 * batch so that captured graphs, which hold their addresses, replay on them. The BF16 copies of the products'
 * operands exist only for BF16 products.
 */
final class MiniLmCudaActivations implements AutoCloseable {

    final int batch;
    final int rows;
    final DeviceBuffer ids;
    final DeviceBuffer lengths;
    final DeviceBuffer x;
    final DeviceBuffer qkv;
    final DeviceBuffer ctx;
    final DeviceBuffer tmp;
    final DeviceBuffer up;
    final DeviceBuffer pooled;
    final DeviceBuffer x16;
    final DeviceBuffer ctx16;
    final DeviceBuffer up16;
    private final OwnedBuffers owned;

    MiniLmCudaActivations(CudaDevice device, MiniLmConfig config, int batch, int rows, boolean bf16) {
        this.owned = new OwnedBuffers(device);
        this.batch = batch;
        this.rows = rows;
        int h = config.hidden();
        try {
            ids = floats(rows);
            lengths = floats(batch);
            x = floats((long) rows * h);
            qkv = floats((long) rows * 3 * h);
            ctx = floats((long) rows * h);
            tmp = floats((long) rows * h);
            up = floats((long) rows * config.intermediate());
            pooled = floats((long) batch * h);
            x16 = bf16 ? halves((long) rows * h) : null;
            ctx16 = bf16 ? halves((long) rows * h) : null;
            up16 = bf16 ? halves((long) rows * config.intermediate()) : null;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    boolean fits(int batch, int rows) {
        return batch <= this.batch && rows <= this.rows;
    }

    private DeviceBuffer floats(long n) {
        return owned.allocate(4 * n);
    }

    private DeviceBuffer halves(long n) {
        return owned.allocate(2 * n);
    }

    /** Frees every buffer once; idempotent. */
    @Override
    public void close() {
        owned.close();
    }
}
