package io.mstar.worker.kernel.tts;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * One job's K/V on the host while a batch runs: the request's earlier positions copied out of the pool (one
 * contiguous copy per page), room for the positions the job feeds, and their slots written back afterwards.
 * {@link #values} holds position {@code p}'s slot at {@code p * stride}, in the pool's slot layout.
 */
final class LmJobKv {

    final float[] values;
    final int stride;
    private final LmJob job;

    private LmJobKv(LmJob job, int stride) {
        this.job = job;
        this.stride = stride;
        this.values = new float[job.sequenceLength() * stride];
    }

    /** The job's earlier K/V, read from {@code pool}. */
    static LmJobKv load(Device device, DeviceBuffer pool, KvCacheLayout layout, LmJob job) {
        LmJobKv kv = new LmJobKv(job, (int) (layout.bytesPerToken() / Float.BYTES));
        int pageSize = layout.pageSize();
        int known = job.firstPosition();
        ByteBuffer bytes = ByteBuffer.allocateDirect((int) (Math.min(pageSize, known) * layout.bytesPerToken()))
                .order(ByteOrder.LITTLE_ENDIAN);
        for (int page = 0; page * pageSize < known; page++) {
            int tokens = Math.min(pageSize, known - page * pageSize);
            bytes.clear().limit((int) (tokens * layout.bytesPerToken()));
            device.copyToHost(pool, job.pages()[page] * layout.pageBytes(), bytes);
            bytes.asFloatBuffer().get(kv.values, page * pageSize * kv.stride, tokens * kv.stride);
        }
        return kv;
    }

    /** Writes the slots of the positions the job fed into {@code pool}. */
    void store(Device device, DeviceBuffer pool, KvCacheLayout layout) {
        ByteBuffer slot = ByteBuffer.allocateDirect((int) layout.bytesPerToken()).order(ByteOrder.LITTLE_ENDIAN);
        FloatBuffer slotFloats = slot.asFloatBuffer();
        for (int p = job.firstPosition(); p < job.sequenceLength(); p++) {
            slotFloats.clear();
            slotFloats.put(values, p * stride, stride);
            long offset = layout.byteOffset(job.pages()[p / layout.pageSize()], p % layout.pageSize());
            device.copyFromHost(slot, pool, offset);
        }
    }
}
