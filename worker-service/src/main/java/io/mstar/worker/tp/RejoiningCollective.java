package io.mstar.worker.tp;

import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * A worker's place in its tensor-parallel group's shared-memory collective, joined at the first call and joined again
 * after a failure (docs/tensor-parallelism.md#a-lost-rank): a call that fails (a peer lost: TIMEOUT; ABORTED) ends the
 * group for every rank, so this rank drops it, and its next call joins a new one, which rank 0 makes when its own next
 * call comes. The step that failed fails its requests; the group serves the next batch once every rank is back.
 * Single-threaded: the rank's step thread.
 */
public final class RejoiningCollective implements Collective {

    private final SharedMemoryCollectiveSettings settings;
    private SharedMemoryCollective group;
    private long joins;

    public RejoiningCollective(SharedMemoryCollectiveSettings settings) {
        this.settings = settings;
    }

    @Override
    public int rank() {
        return settings.rank();
    }

    @Override
    public int size() {
        return settings.size();
    }

    /** Times this rank joined its group: 1 after the first call, one more after every failure. */
    public long joins() {
        return joins;
    }

    private SharedMemoryCollective joined() {
        if (group == null) {
            group = SharedMemoryCollective.join(settings);
            joins++;
        }
        return group;
    }

    private <T> T call(java.util.function.Function<SharedMemoryCollective, T> operation) {
        try {
            return operation.apply(joined());
        } catch (CollectiveException e) {
            drop();
            throw e;
        }
    }

    @Override
    public void allReduceSum(DeviceBuffer buffer, long offset, int floats) {
        call(g -> {
            g.allReduceSum(buffer, offset, floats);
            return null;
        });
    }

    @Override
    public void broadcast(DeviceBuffer buffer, long offset, long bytes) {
        call(g -> {
            g.broadcast(buffer, offset, bytes);
            return null;
        });
    }

    @Override
    public void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
        call(g -> {
            g.allGather(in, inOffset, out, outOffset, bytesPerRank);
            return null;
        });
    }

    @Override
    public void barrier() {
        call(g -> {
            g.barrier();
            return null;
        });
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
            SharedMemoryCollective g = group;
            group = null;
            g.abort();
            g.close();
        }
    }
}
