package io.mstar.worker.tp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kv.KvCacheException;

/**
 * The sampling step of a tensor-parallel group: rank 0 draws every row of the batch, and one
 * {@link Collective#broadcast} gives every rank its ids, so every rank appends the same tokens and stops at the same
 * step whatever its logits (bit-identical on host, where the row sums are gathered in one order; a device whose
 * collective sums in an order of its own could differ in the last bits). The other ranks
 * never draw, so the sampler's per-request seed and step are consumed in one place, as on one worker.
 *
 * <p>A draw that fails for its request alone ({@link KvCacheException}: unusable logits, bad settings;
 * {@link KernelException}) makes the row {@link #FAILED} on every rank, and the batch goes on. Any other exception
 * aborts the collective before it propagates on rank 0, so the peers waiting in the broadcast fail at once with
 * ABORTED instead of running into the timeout. Single-threaded: the rank's step thread.
 */
public final class TensorParallelSampling {

    /** The id of a row whose draw failed on rank 0. */
    public static final int FAILED = -1;

    /**
     * Rank 0's draw of one row: the caller's sampler with the request's settings, seed and step. It answers a token
     * id, or {@link #FAILED}; or throws {@link KvCacheException} or {@link KernelException} for a failure of the row's
     * request alone (a caller that reports the cause catches it itself first).
     */
    @FunctionalInterface
    public interface Draw {
        int draw(int row, float[] logits);
    }

    private final Collective collective;
    private final Device device;

    /** @param device the rank's device, where the ids meet (the collective's device kind) */
    public TensorParallelSampling(Collective collective, Device device) {
        this.collective = Objects.requireNonNull(collective, "collective");
        this.device = Objects.requireNonNull(device, "device");
    }

    /**
     * The batch's tokens, the same on every rank: rank 0's draws. Every rank calls it with a batch of the same rows.
     *
     * @param logits each row's logits on this rank (read on rank 0 only)
     * @return row {@code j}'s token id, or {@link #FAILED}
     * @throws CollectiveException when the broadcast fails (a peer lost): the step failed and the group is rebuilt
     */
    public int[] sample(float[][] logits, Draw draw) {
        int rows = logits.length;
        if (rows == 0) {
            return new int[0];
        }
        ByteBuffer ids = ByteBuffer.allocateDirect(rows * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        if (collective.rank() == 0) {
            for (int j = 0; j < rows; j++) {
                ids.putInt(j * Integer.BYTES, drawOrAbort(draw, j, logits[j]));
            }
        }
        DeviceBuffer buffer = device.allocate(ids.capacity());
        try {
            device.copyFromHost(ids, buffer, 0);
            collective.broadcast(buffer, 0, ids.capacity());
            device.copyToHost(buffer, 0, ids);
        } finally {
            device.free(buffer);
        }
        int[] out = new int[rows];
        ids.asIntBuffer().get(out);
        return out;
    }

    private int drawOrAbort(Draw draw, int row, float[] logits) {
        try {
            return draw.draw(row, logits);
        } catch (KvCacheException | KernelException e) {
            return FAILED;
        } catch (RuntimeException | Error e) {
            collective.abort();
            throw e;
        }
    }
}
