package io.mstar.tensor.collective;

import static org.bytedeco.cuda.global.nccl.NCCL_UNIQUE_ID_BYTES;
import static org.bytedeco.cuda.global.nccl.ncclAllGather;
import static org.bytedeco.cuda.global.nccl.ncclAllReduce;
import static org.bytedeco.cuda.global.nccl.ncclBroadcast;
import static org.bytedeco.cuda.global.nccl.ncclCommInitRankConfig;
import static org.bytedeco.cuda.global.nccl.ncclFloat;
import static org.bytedeco.cuda.global.nccl.ncclGetUniqueId;
import static org.bytedeco.cuda.global.nccl.ncclInProgress;
import static org.bytedeco.cuda.global.nccl.ncclSuccess;
import static org.bytedeco.cuda.global.nccl.ncclSum;
import static org.bytedeco.cuda.global.nccl.ncclUint8;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Optional;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Pointer;

import io.mstar.tensor.collective.BoundedWait.Outcome;
import io.mstar.tensor.collective.CollectiveException.Reason;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.CudaEvent;

/**
 * Collectives between GPU workers through NCCL (docs/tensor-runtime.md#collectives), one communicator per
 * {@link CudaDevice}, issued on the device's one stream so that they are ordered with its launches and copies.
 *
 * <p>Bootstrap: rank 0 calls {@link #uniqueId()} and hands the 128 bytes to the other ranks over the control plane;
 * every rank then calls {@link #join}. The communicator is non-blocking ({@code ncclCommInitRankConfig} with
 * {@code blocking = 0}): NCCL never blocks a call on a peer, and this class polls instead, boundedly.
 *
 * <p>A call enqueues under the device's monitor (the context current, as {@code CudaBlas} does), waits there until
 * NCCL has put the work on the stream (a non-blocking communicator may answer {@code ncclInProgress} first, while it
 * connects to peers), records an event after it, and waits for the event without the monitor, polling it and
 * {@code ncclCommGetAsyncError}. A wait that passes the timeout calls {@code ncclCommAbort}, which also stops kernels
 * spinning for a dead peer (the stream would otherwise never move again), and fails with TIMEOUT.
 *
 * <p>A CUDA error of the device surfaces as its own {@link DeviceException} (the communicator is aborted first).
 */
public final class NcclCollective implements Collective {

    private final CudaDevice device;
    private final NcclComm nccl;
    private final int rank;
    private final int size;
    private final Duration timeout;
    private final DeviceBuffer scratch;
    private long calls; // the owner's
    private volatile boolean inCall;
    private volatile boolean closed;
    private volatile String abortedBecause;

    private NcclCollective(CudaDevice device, ncclComm comm, int rank, int size, Duration timeout) {
        this.device = device;
        this.nccl = new NcclComm(comm, device.name() + " rank " + rank);
        this.rank = rank;
        this.size = size;
        this.timeout = timeout;
        this.scratch = device.allocate(Float.BYTES);
        device.zero(scratch, 0, Float.BYTES);
    }

    /**
     * A new unique id, made by rank 0 (NCCL starts its bootstrap listener in this process) and handed to every rank's
     * {@link #join}: 128 bytes.
     */
    public static byte[] uniqueId() {
        CollectiveCall call = new CollectiveCall(CollectiveOperation.JOIN, 0, 0, 0);
        requireLibrary(call);
        ncclUniqueId id = new ncclUniqueId();
        int result = ncclGetUniqueId(id);
        if (result != ncclSuccess) {
            throw call.fail(Reason.NCCL_ERROR, "ncclGetUniqueId: " + NcclLibrary.describe(result));
        }
        return NcclLibrary.bytes(id);
    }

    /** Why NCCL does not load on this machine ({@code libnccl.so.2} not on the library path), or empty. */
    public static Optional<String> unavailableReason() {
        return NcclLibrary.unavailableReason();
    }

    /**
     * Joins the group as {@code rank} of {@code size} on {@code device}; returns once every rank has joined.
     * The process must run with {@code NCCL_NVLS_ENABLE=0}: NVLink multicast stays off.
     *
     * @throws CollectiveException INVALID_ARGUMENT for bad arguments or NVLink multicast not turned off; NCCL_ERROR
     *         when NCCL does not load or fails; TIMEOUT when not every rank joined within {@code timeout}
     */
    public static NcclCollective join(CudaDevice device, int rank, int size, byte[] uniqueId, Duration timeout) {
        CollectiveCall call = new CollectiveCall(CollectiveOperation.JOIN, rank, size, 0);
        if (device == null || size < 1 || rank < 0 || rank >= size || uniqueId == null
                || uniqueId.length != NCCL_UNIQUE_ID_BYTES || timeout == null || timeout.isNegative()
                || timeout.isZero()) {
            throw call.fail(Reason.INVALID_ARGUMENT, "join needs a device, 0 <= rank < size, a unique id of "
                    + NCCL_UNIQUE_ID_BYTES + " bytes and a positive timeout");
        }
        requireLibrary(call);
        if (!NcclLibrary.multicastOff()) {
            throw call.fail(Reason.INVALID_ARGUMENT, "set " + NcclLibrary.NVLS_VARIABLE + "=0 in the environment: "
                    + "NVLink multicast stays off (docs/tensor-runtime.md#collectives)");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        ncclComm comm = new ncclComm();
        ncclUniqueId id = NcclLibrary.uniqueId(uniqueId);
        ncclConfig_t config = NcclLibrary.nonBlockingConfig();
        int[] result = new int[1];
        device.onStream(stream -> result[0] = ncclCommInitRankConfig(comm, size, id, rank, config));
        if (comm.isNull()) {
            throw call.fail(Reason.NCCL_ERROR, "ncclCommInitRankConfig: " + NcclLibrary.describe(result[0]));
        }
        NcclCollective collective = new NcclCollective(device, comm, rank, size, timeout);
        try {
            collective.settle(call, result[0], "ncclCommInitRankConfig", deadline);
        } catch (CollectiveException e) {
            collective.close();
            throw e;
        } finally {
            Reference.reachabilityFence(id); // native memory NCCL reads, kept until init is over
            Reference.reachabilityFence(config);
        }
        return collective;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void allReduceSum(DeviceBuffer buffer, long offset, int floats) {
        CollectiveCall call = begin(CollectiveOperation.ALL_REDUCE_SUM);
        long bytes = call.floatBytes(floats);
        Pointer data = pointer(call, buffer, offset, bytes, "allReduceSum");
        if (bytes > 0) {
            run(call, "ncclAllReduce", (comm, s) -> ncclAllReduce(data, data, floats, ncclFloat, ncclSum, comm, s));
        }
    }

    @Override
    public void broadcast(DeviceBuffer buffer, long offset, long bytes) {
        CollectiveCall call = begin(CollectiveOperation.BROADCAST);
        Pointer data = pointer(call, buffer, offset, bytes, "broadcast");
        if (bytes > 0) {
            run(call, "ncclBroadcast", (comm, s) -> ncclBroadcast(data, data, bytes, ncclUint8, 0, comm, s));
        }
    }

    @Override
    public void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
        CollectiveCall call = begin(CollectiveOperation.ALL_GATHER);
        long total = call.checkGather(in, inOffset, out, outOffset, bytesPerRank);
        Pointer src = pointer(call, in, inOffset, bytesPerRank, "allGather in");
        Pointer dst = pointer(call, out, outOffset, total, "allGather out");
        if (bytesPerRank > 0 && size == 1) {
            // NCCL's one-rank path copies with the CUDA runtime, which does not know this device's driver-API
            // allocations: it leaves the output untouched and reports success. The copy is the whole collective.
            device.copyWithin(in, inOffset, out, outOffset, bytesPerRank);
        } else if (bytesPerRank > 0) {
            run(call, "ncclAllGather", (comm, s) -> ncclAllGather(src, dst, bytesPerRank, ncclUint8, comm, s));
        }
    }

    /** NCCL has no barrier: an all-reduce of one float of this communicator's own, which every rank must join. */
    @Override
    public void barrier() {
        CollectiveCall call = begin(CollectiveOperation.BARRIER);
        Pointer one = NcclLibrary.at(scratch.address());
        run(call, "ncclAllReduce", (comm, s) -> ncclAllReduce(one, one, 1, ncclFloat, ncclSum, comm, s));
    }

    /** {@code ncclCommAbort}: the waiting call (and every later one) fails with ABORTED; kernels of it stop. */
    @Override
    public void abort() {
        abortComm("abort() on rank " + rank);
    }

    /**
     * {@code ncclCommDestroy} after the last call; {@code ncclCommAbort} instead when a call is still in flight on
     * another thread (it fails with CLOSED). A communicator that failed was aborted already.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // an abort also stops kernels still waiting for a peer; a destroy would wait for them
        nccl.release(!inCall, timeout);
        device.free(scratch);
    }

    /** Enqueues one collective on the device's stream and waits, boundedly, until it has completed there. */
    private void run(CollectiveCall call, String what, Enqueue enqueue) {
        long deadline = System.nanoTime() + timeout.toNanos();
        CudaEvent[] done = new CudaEvent[1];
        inCall = true;
        try {
            device.onStream(stream -> {
                CUstream_st cuStream = new CUstream_st(NcclLibrary.at(stream));
                int result = nccl.call(comm -> enqueue.on(comm, cuStream));
                if (result == NcclComm.RELEASED) {
                    throw stoppedFailure(call);
                }
                // on the stream only once NCCL says so: an event recorded before would complete before the work
                settle(call, result, what, deadline);
                done[0] = device.recordEvent();
            });
            CudaEvent event = done[0];
            int[] failure = {ncclSuccess};
            Outcome outcome = BoundedWait.until(() -> {
                int state = nccl.asyncState();
                if (state != ncclSuccess && state != ncclInProgress) {
                    failure[0] = state;
                    return true;
                }
                return event.isComplete();
            }, this::stopped, deadline);
            check(call, outcome, failure[0], what);
        } catch (DeviceException e) {
            abortComm("device error: " + e.getMessage());
            throw e;
        } finally {
            inCall = false;
            if (done[0] != null) {
                closeQuietly(done[0]);
            }
        }
    }

    private static void closeQuietly(CudaEvent event) {
        try {
            event.close();
        } catch (DeviceException e) {
            // the device's error ended the call already, or its next operation reports it
        }
    }

    /** Waits until a non-blocking call's {@code result} is no longer in progress: NCCL has done its part. */
    private void settle(CollectiveCall call, int result, String what, long deadline) {
        if (result != ncclSuccess && result != ncclInProgress) {
            throw ncclFailure(call, result, what);
        }
        int[] state = {result};
        Outcome outcome = result == ncclSuccess ? Outcome.DONE
                : BoundedWait.until(() -> (state[0] = nccl.asyncState()) != ncclInProgress, this::stopped, deadline);
        check(call, outcome, state[0], what);
    }

    private void check(CollectiveCall call, Outcome outcome, int state, String what) {
        switch (outcome) {
            case DONE -> {
                if (stopped()) {
                    throw stoppedFailure(call);
                }
                if (state != ncclSuccess) {
                    throw ncclFailure(call, state, what);
                }
            }
            case STOPPED -> throw stoppedFailure(call);
            case INTERRUPTED -> {
                abortComm("rank " + rank + " was interrupted in " + call.operation() + " #" + call.sequence());
                throw call.fail(Reason.ABORTED, "interrupted while waiting for " + what);
            }
            case TIMED_OUT -> {
                abortComm("rank " + rank + " timed out in " + call.operation() + " #" + call.sequence());
                throw call.fail(Reason.TIMEOUT, what + " did not complete within " + timeout
                        + " (a peer is gone or far behind); communicator aborted");
            }
        }
    }

    private CollectiveException ncclFailure(CollectiveCall call, int result, String what) {
        String last = nccl.lastError();
        abortComm(what + " failed on rank " + rank + ": " + NcclLibrary.describe(result));
        return call.fail(Reason.NCCL_ERROR, what + ": " + NcclLibrary.describe(result) + last
                + "; communicator aborted");
    }

    private void abortComm(String because) {
        if (abortedBecause == null) {
            abortedBecause = because;
        }
        nccl.release(false, timeout);
    }

    private boolean stopped() {
        return closed || abortedBecause != null;
    }

    private CollectiveException stoppedFailure(CollectiveCall call) {
        String because = abortedBecause;
        return because == null ? call.fail(Reason.CLOSED, "the collective is closed")
                : call.fail(Reason.ABORTED, because);
    }

    private CollectiveCall begin(CollectiveOperation operation) {
        CollectiveCall call = new CollectiveCall(operation, rank, size, ++calls);
        if (stopped()) {
            throw stoppedFailure(call);
        }
        return call;
    }

    /** The device address of {@code [offset, offset + bytes)} of a live buffer of this communicator's device. */
    private Pointer pointer(CollectiveCall call, DeviceBuffer buffer, long offset, long bytes, String what) {
        call.checkRange(buffer, offset, bytes, what);
        if (buffer.device() != device || !device.isLive(buffer)) {
            throw call.fail(Reason.INVALID_ARGUMENT, what + ": not a live buffer of " + device.name() + ": " + buffer);
        }
        return NcclLibrary.at(buffer.address() + offset);
    }

    private static void requireLibrary(CollectiveCall call) {
        NcclLibrary.unavailableReason().ifPresent(why -> {
            throw call.fail(Reason.NCCL_ERROR, why);
        });
    }

    /** One NCCL enqueue on the communicator and stream, returning its result code. */
    @FunctionalInterface
    private interface Enqueue {
        int on(ncclComm comm, CUstream_st stream);
    }
}
