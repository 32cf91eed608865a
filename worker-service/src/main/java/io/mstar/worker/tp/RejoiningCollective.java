package io.mstar.worker.tp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.CollectiveOperation;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * A worker's place in its tensor-parallel group's collective, joined at the first call and joined again after a
 * failure (docs/tensor-parallelism.md#a-lost-rank): the shared-memory collective of host ranks (staged through the
 * host for GPU ranks without NCCL), or an NCCL communicator whose unique id rank 0 hands over ({@link NcclJoin}). A
 * call that fails (a peer lost: TIMEOUT; ABORTED) ends the group for every rank, so this rank drops it, and its next
 * call joins a new one, which rank 0 makes when its own next call comes. The step that failed fails its requests; the
 * group serves the next batch once every rank is back. At each join the ranks check that they are set up alike (a
 * follower replays the leader's KV moves on pools of its own). Single-threaded: the rank's step thread.
 */
public final class RejoiningCollective implements Collective {

    private final int rank;
    private final int size;
    private final Supplier<Collective> join;
    private final Device device;
    private final String setup;
    private final Runnable onJoin;
    private Collective group;
    private long joins;

    /** A rank that checks nothing of its peers' settings at a join (tests of the collective itself). */
    public RejoiningCollective(SharedMemoryCollectiveSettings settings) {
        this(settings, null, "");
    }

    /**
     * @param device where the join's check meets its peers' (the rank's device)
     * @param setup what every rank of the group must have alike, in words (its KV settings, say): at each join the
     *              ranks compare it, and a group whose ranks differ fails every call with INVALID_ARGUMENT naming both,
     *              instead of drifting apart later
     */
    public RejoiningCollective(SharedMemoryCollectiveSettings settings, Device device, String setup) {
        this(settings.rank(), settings.size(), () -> SharedMemoryCollective.join(settings), device, setup,
                () -> { });
    }

    /**
     * @param join makes and joins the group's next collective (blocking, bounded), on the rank's step thread
     * @param device the rank's device: the join's check meets its peers' there, in buffers the collective takes
     * @param onJoin   told of every join (a metric)
     */
    public RejoiningCollective(int rank, int size, Supplier<Collective> join, Device device, String setup,
            Runnable onJoin) {
        this.rank = rank;
        this.size = size;
        this.join = join;
        this.device = device;
        this.setup = setup;
        this.onJoin = onJoin;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    /** Times this rank joined its group: 1 after the first call, one more after every failure. */
    public long joins() {
        return joins;
    }

    private Collective joined() {
        if (group == null) {
            group = join.get();
            joins++;
            onJoin.run();
            if (device != null) {
                checkSetup(group);
            }
        }
        return group;
    }

    /**
     * Every rank's {@link #setup}'s hash, all-gathered: a rank whose differs from rank 0's makes every rank fail. The
     * group is closed, not aborted, so that every peer completes the gather and finds the difference itself.
     */
    private void checkSetup(Collective g) {
        DeviceBuffer hashes = device.allocate((long) size * Long.BYTES);
        int differs = -1;
        try {
            ByteBuffer own = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(0, fingerprint(setup));
            device.copyFromHost(own, hashes, (long) rank() * Long.BYTES);
            g.allGather(hashes, (long) rank() * Long.BYTES, hashes, 0, Long.BYTES);
            ByteBuffer all = ByteBuffer.allocateDirect(size * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(hashes, 0, all);
            for (int r = 1; r < size && differs < 0; r++) {
                differs = all.getLong(r * Long.BYTES) != all.getLong(0) ? r : -1;
            }
        } finally {
            device.free(hashes);
        }
        if (differs >= 0) {
            group = null;
            g.close();
            throw new CollectiveException(CollectiveException.Reason.INVALID_ARGUMENT, CollectiveOperation.JOIN, rank(),
                    size, 0, "rank " + differs + " of the group is set up otherwise than rank 0 (this rank: " + setup
                    + "); give every rank the same settings", null);
        }
    }

    /** A 64-bit FNV-1a hash of {@code text}: fixed by its definition, so every rank's JVM computes the same. */
    static long fingerprint(String text) {
        long h = 0xcbf29ce484222325L;
        for (byte b : text.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    /** Runs {@code operation} on the group, joined first if need be; a failure ends the group for this rank. */
    private void call(Consumer<Collective> operation) {
        try {
            operation.accept(joined());
        } catch (CollectiveException e) {
            drop();
            throw e;
        }
    }

    @Override
    public void allReduceSum(DeviceBuffer buffer, long offset, int floats) {
        call(g -> g.allReduceSum(buffer, offset, floats));
    }

    @Override
    public void broadcast(DeviceBuffer buffer, long offset, long bytes) {
        call(g -> g.broadcast(buffer, offset, bytes));
    }

    @Override
    public void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
        call(g -> g.allGather(in, inOffset, out, outOffset, bytesPerRank));
    }

    @Override
    public void barrier() {
        call(g -> g.barrier());
    }

    /** Ends the current group for every rank (their waiting calls fail at once); the next call joins a new one. */
    @Override
    public void abort() {
        if (group != null) {
            group.abort();
            drop();
        }
    }

    @Override
    public void close() {
        drop();
    }

    private void drop() {
        if (group != null) {
            Collective g = group;
            group = null;
            g.abort();
            g.close();
        }
    }
}
