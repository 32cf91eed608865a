package io.mstar.worker.kernel.tts;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;

import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * One rank of the toy-tts lm on a tensor-parallel group, on the host (docs/toy-tts.md#tensor-parallelism): it keeps
 * only its {@link LmShard} (its heads' Wq/Wk/Wv columns and Wo rows, its slice of W1 columns and W2 rows; the rest
 * whole) and its KV pool only its heads' K and V ({@link #bytesPerToken()}). Per layer the row-parallel output
 * projections of attention and MLP give partial sums, completed by one {@link Collective#allReduceSum} each that
 * covers every token of every job of the call: {@code 2 * LAYERS} all-reduces a batch, whatever its size. Logits
 * come from the whole output head on every rank, identical on all of them when the all-reduce sums in rank order
 * ({@code SharedMemoryCollective}); sampling is rank 0's ({@code TensorParallelSampling}).
 *
 * <p>Every rank runs the same batches in the same order (a collective is matched by its place in that order). The
 * math is {@link LmForward}'s, as in {@link HostLmBackend}; with the partials summed in another order than the
 * reference's one pass, the logits differ from its in the last bits (docs/toy-tts.md gives the measured bound).
 * Single-threaded, like the collective: the rank's step thread.
 */
public final class TensorParallelLmBackend implements LmBackend, AutoCloseable {

    private final Collective collective;
    private final Device device;
    private final LmForward forward;
    private final long bytesPerToken;
    /** The all-reduce's buffer on the rank's device and its host staging, grown to the largest batch so far. */
    private DeviceBuffer reduced;
    private ByteBuffer staging;
    private boolean closed;

    /**
     * Keeps rank {@code collective.rank()}'s shard of {@code weights} for a group of {@code collective.size()}.
     *
     * @param device the rank's device: its KV pool's and the all-reduce buffer's
     * @throws IllegalArgumentException when the group's size (tp_size) does not split the model
     */
    public TensorParallelLmBackend(ToyTtsWeights weights, Collective collective, Device device) {
        this.collective = Objects.requireNonNull(collective, "collective");
        this.device = Objects.requireNonNull(device, "device");
        LmShard shard = LmShard.of(weights, collective.rank(), collective.size());
        this.forward = new LmForward(shard);
        this.bytesPerToken = (long) shard.slotFloats() * Float.BYTES;
    }

    public int rank() {
        return collective.rank();
    }

    public int tpSize() {
        return collective.size();
    }

    /** Bytes of one KV slot on this rank: {@link ToyTtsWeights#bytesPerToken(int)} of the group's size. */
    public long bytesPerToken() {
        return bytesPerToken;
    }

    /**
     * {@inheritDoc}
     *
     * @throws CollectiveException when the group cannot complete a sum (a peer lost: TIMEOUT; ABORTED): the batch
     *                             failed and the group is to be rebuilt; the pool may hold some of its K/V
     */
    @Override
    public float[][] run(Device device, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs) {
        if (closed) {
            throw new IllegalStateException("tensor-parallel lm of rank " + rank() + " is closed");
        }
        if (device != this.device) {
            throw new IllegalArgumentException("rank " + rank() + " runs on " + this.device.name() + ", not on "
                    + device.name());
        }
        return forward.run(device, pool, layout, jobs, this::allReduce);
    }

    /** Sums {@code values[0, floats)} over the group through the device, in place. */
    private void allReduce(float[] values, int floats) {
        long bytes = (long) floats * Float.BYTES;
        if (reduced == null || reduced.nbytes() < bytes) {
            free();
            reduced = device.allocate(bytes);
            staging = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        staging.clear().limit((int) bytes);
        staging.asFloatBuffer().put(values, 0, floats);
        device.copyFromHost(staging, reduced, 0);
        collective.allReduceSum(reduced, 0, floats);
        device.copyToHost(reduced, 0, staging);
        staging.asFloatBuffer().get(values, 0, floats);
    }

    /** Frees the all-reduce buffer; the collective is its owner's to close. Idempotent. */
    @Override
    public void close() {
        closed = true;
        free();
    }

    private void free() {
        if (reduced != null) {
            device.free(reduced);
            reduced = null;
            staging = null;
        }
    }
}
