package io.mstar.tensor.collective;

import java.nio.ByteBuffer;
import java.util.Objects;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;

/**
 * A collective of ranks whose buffers live on a GPU (or any {@link Device}), run by a collective of host buffers
 * ({@link SharedMemoryCollective}, usually through the worker's rejoining wrapper): each call copies this rank's bytes
 * to the host, runs the host call, and copies the result back (docs/tensor-runtime.md#collectives). For GPU ranks of
 * one machine without NCCL between them: ranks that share one GPU, which NCCL refuses ("duplicate GPU"), or a local
 * stack. Every wait is the host collective's, bounded as it is; its reduction order (rank order) is kept.
 *
 * <p>The copies synchronize the device's stream, so a call sees every launch made before it and its result is in
 * place when it returns, as {@link Collective} requires. Single-threaded like every collective: the rank's step
 * thread; {@link #abort()} from any thread.
 */
public final class HostStagedCollective implements Collective {

    private final Collective host;
    private final HostDevice staging;
    private final Device device;
    /** The host copy of a call's bytes, grown to the largest call; freed at close. */
    private HostBuffer buffer;

    /**
     * @param host    the collective over {@code staging}'s buffers, closed with this one
     * @param staging where the host copies live: a device of this collective's own
     * @param device  the rank's device, whose buffers the calls name
     */
    public HostStagedCollective(Collective host, HostDevice staging, Device device) {
        this.host = Objects.requireNonNull(host, "host");
        this.staging = Objects.requireNonNull(staging, "staging");
        this.device = Objects.requireNonNull(device, "device");
    }

    @Override
    public int rank() {
        return host.rank();
    }

    @Override
    public int size() {
        return host.size();
    }

    @Override
    public void allReduceSum(DeviceBuffer buffer, long offset, int floats) {
        long bytes = (long) floats * Float.BYTES;
        HostBuffer b = stage(CollectiveOperation.ALL_REDUCE_SUM, buffer, offset, 0, bytes);
        host.allReduceSum(b, 0, floats);
        unstage(b, 0, bytes, buffer, offset);
    }

    @Override
    public void broadcast(DeviceBuffer buffer, long offset, long bytes) {
        HostBuffer b = stage(CollectiveOperation.BROADCAST, buffer, offset, 0, bytes);
        host.broadcast(b, 0, bytes);
        unstage(b, 0, bytes, buffer, offset);
    }

    @Override
    public void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
        long own = rank() * bytesPerRank;
        HostBuffer b = grow(CollectiveOperation.ALL_GATHER, size() * bytesPerRank);
        stage(CollectiveOperation.ALL_GATHER, in, inOffset, own, bytesPerRank);
        host.allGather(b, own, b, 0, bytesPerRank);
        unstage(b, 0, size() * bytesPerRank, out, outOffset);
    }

    @Override
    public void barrier() {
        host.barrier();
    }

    @Override
    public void abort() {
        host.abort();
    }

    @Override
    public void close() {
        host.close();
        if (buffer != null) {
            staging.free(buffer);
            buffer = null;
        }
    }

    /** {@code bytes} at {@code offset} of the rank's {@code from} into the host copy at {@code at}. */
    private HostBuffer stage(CollectiveOperation operation, DeviceBuffer from, long offset, long at, long bytes) {
        HostBuffer b = grow(operation, at + bytes);
        device.copyToHost(from, offset, window(b, at, bytes));
        return b;
    }

    private void unstage(HostBuffer b, long at, long bytes, DeviceBuffer to, long offset) {
        device.copyFromHost(window(b, at, bytes), to, offset);
    }

    private HostBuffer grow(CollectiveOperation operation, long bytes) {
        if (bytes > Integer.MAX_VALUE) {
            throw new CollectiveException(CollectiveException.Reason.INVALID_ARGUMENT, operation,
                    rank(), size(), 0, bytes + " bytes in one staged call; the host copy holds at most 2 GiB", null);
        }
        if (buffer == null || buffer.nbytes() < bytes) {
            if (buffer != null) {
                staging.free(buffer);
            }
            buffer = (HostBuffer) staging.allocate(bytes);
        }
        return buffer;
    }

    private static ByteBuffer window(HostBuffer b, long at, long bytes) {
        return b.bytes().position((int) at).limit((int) (at + bytes)).slice();
    }
}
