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
 * projections of attention and MLP give the partials of the rank's row blocks ({@link LmForward}: the rows of Wo and
 * W2 in {@link ToyTtsWeights#MAX_TP} fixed blocks at every tp_size), shared by one {@link Collective#allGather} each
 * that covers every token of every job of the call: {@code 2 * LAYERS} all-gathers a batch, whatever its size. Every
 * rank then adds all the blocks' partials in the one canonical order, as the reference does on one worker, so its
 * logits are bit-identical to the reference's and to every other rank's, whatever the tp_size and the collective;
 * sampling is rank 0's ({@code TensorParallelSampling}).
 *
 * <p>Every rank runs the same batches in the same order (a collective is matched by its place in that order). The
 * math is {@link LmForward}'s, as in {@link HostLmBackend}. Single-threaded, like the collective: the rank's step
 * thread.
 */
public final class TensorParallelLmBackend implements LmBackend, AutoCloseable {

    private final Collective collective;
    private final Device device;
    private final LmForward forward;
    private final long bytesPerToken;
    /** The all-gather's buffer on the rank's device and its host staging, grown within a step to its largest call. */
    private DeviceBuffer gathered;
    private ByteBuffer staging;
    private boolean closed;

    /**
     * Keeps rank {@code collective.rank()}'s shard of {@code weights} for a group of {@code collective.size()}.
     *
     * @param device the rank's device: its KV pool's and the all-gather buffer's
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
     * @throws CollectiveException when the group cannot complete a gather (a peer lost: TIMEOUT; ABORTED): the batch
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
        try {
            return forward.run(device, pool, layout, jobs, this::allGather);
        } finally {
            free(); // nothing of a step outlives it: a worker's device bytes are its KV pool's between steps
        }
    }

    /** {@link LmForward.BlockGather#gather}: every rank's range of {@code blocks} to every rank, through the device. */
    private void allGather(float[] blocks, int floatsPerRank) {
        int own = rank() * floatsPerRank;
        int bytesPerRank = floatsPerRank * Float.BYTES;
        int bytes = tpSize() * bytesPerRank;
        if (gathered == null || gathered.nbytes() < bytes) {
            free();
            gathered = device.allocate(bytes);
            staging = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        staging.clear().limit(bytesPerRank);
        staging.asFloatBuffer().put(blocks, own, floatsPerRank);
        device.copyFromHost(staging, gathered, (long) own * Float.BYTES);
        collective.allGather(gathered, (long) own * Float.BYTES, gathered, 0, bytesPerRank);
        staging.clear().limit(bytes);
        device.copyToHost(gathered, 0, staging);
        staging.asFloatBuffer().get(blocks, 0, tpSize() * floatsPerRank);
    }

    /** Frees the all-gather buffer; the collective is its owner's to close. Idempotent. */
    @Override
    public void close() {
        closed = true;
        free();
    }

    private void free() {
        if (gathered != null) {
            device.free(gathered);
            gathered = null;
            staging = null;
        }
    }
}
