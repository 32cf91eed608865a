package io.mstar.tensor.collective;

import io.mstar.tensor.device.DeviceBuffer;

/**
 * The collectives of one tensor-parallel group: {@link #size()} ranks, each a worker running the same node group in
 * lockstep, rank 0 leading (docs/tensor-runtime.md#collectives). {@link SharedMemoryCollective} serves host-device
 * workers of one machine, {@link NcclCollective} GPUs.
 *
 * <p><b>Who calls.</b> The step thread of one worker, one call at a time per communicator; every rank makes the same
 * calls in the same order with the same sizes (a collective is matched by its place in that order, not by a name).
 * Buffers are the worker's own device's ({@code HostDevice} buffers for shared memory, {@code CudaDevice} buffers
 * for NCCL) and are not touched by anything else while the call runs. {@link #abort()} may be called from any
 * thread.
 *
 * <p><b>Ordering.</b> A call returns when its result is in place on this rank: the bytes are in the buffer (NCCL: the
 * work has completed on the device's stream, so later copies and launches see it). Calls complete in the order they
 * were made; there is no overlap between two calls of one communicator.
 *
 * <p><b>Bounded waits.</b> Every wait for a peer ends within the communicator's timeout (the worker-loss timeout):
 * a rank that died or hangs makes its peers' calls fail with {@link CollectiveException.Reason#TIMEOUT} instead of
 * hanging them. After a TIMEOUT, ABORTED or NCCL_ERROR the communicator is unusable: every later call fails at once,
 * and the group is rebuilt with a new one. An INVALID_ARGUMENT found before the call reached its peers (a range, a
 * buffer) leaves it usable.
 */
public interface Collective extends AutoCloseable {

    /** This worker's rank in the group, 0 to {@code size() - 1}; rank 0 leads. */
    int rank();

    /** The number of ranks. */
    int size();

    /**
     * Replaces {@code floats} float32 values at {@code offset} of {@code buffer} on every rank with their sum over the
     * ranks. Shared memory sums in rank order 0, 1, … so every rank gets bit-identical values; NCCL sums in an order
     * of its own (ring or tree), not rank order.
     */
    void allReduceSum(DeviceBuffer buffer, long offset, int floats);

    /** Copies {@code bytes} at {@code offset} of rank 0's buffer into the same range of every other rank's. */
    void broadcast(DeviceBuffer buffer, long offset, long bytes);

    /**
     * Gathers every rank's {@code bytesPerRank} at {@code inOffset} of {@code in}: rank r's land at
     * {@code outOffset + r * bytesPerRank} of {@code out}, on every rank. {@code in} and {@code out} may be one buffer
     * when {@code in}'s range is this rank's own part of {@code out} (in place); otherwise they must not overlap.
     */
    void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank);

    /** Returns once every rank has called it. */
    void barrier();

    /**
     * Fails the call in progress and every later one with {@link CollectiveException.Reason#ABORTED}, at once; from
     * any thread (the worker does it when a peer is reported lost, or when it stops). NCCL: {@code ncclCommAbort},
     * which also stops kernels waiting for a peer. Shared memory: peers' calls fail too. Idempotent.
     */
    void abort();

    /**
     * Releases the communicator. Called by the owner after its last call; a call still waiting on another thread
     * fails with {@link CollectiveException.Reason#CLOSED}. Idempotent.
     */
    @Override
    void close();
}
