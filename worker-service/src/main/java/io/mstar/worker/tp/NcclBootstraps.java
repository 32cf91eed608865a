package io.mstar.worker.tp;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.CollectiveOperation;
import io.mstar.wire.CollectiveBootstrap;

/**
 * Where a follower of a GPU tensor-parallel group receives its leader's NCCL unique ids
 * (docs/tensor-parallelism.md#gpu-ranks): the inbox's listener thread offers each {@link CollectiveBootstrap}, the
 * rank's step thread takes the latest one it has not joined with yet, waiting for it within a bound. Only the groups
 * this worker is a follower of are kept, one id each: a bootstrap for any other collective is dropped and logged.
 * Thread-safe.
 */
public final class NcclBootstraps {

    private static final Logger log = LoggerFactory.getLogger(NcclBootstraps.class);

    private final Set<String> followed;
    // guarded by this
    private final Map<String, CollectiveBootstrap> latest = new HashMap<>();
    private final Map<String, String> joined = new HashMap<>();

    /** @param followed the collectives this worker follows (none on a worker that leads or is in no group) */
    public NcclBootstraps(Set<String> followed) {
        this.followed = Set.copyOf(followed);
    }

    /** A bootstrap from the control plane: replaces the collective's earlier one, and wakes a waiting rank. */
    public synchronized void offer(CollectiveBootstrap bootstrap) {
        if (!followed.contains(bootstrap.collective())) {
            log.warn("NCCL bootstrap {} (generation {}) dropped: this worker follows {}", bootstrap.collective(),
                    bootstrap.generation(), followed);
            return;
        }
        CollectiveBootstrap earlier = latest.get(bootstrap.collective());
        if (earlier != null && earlier.generation() > bootstrap.generation()) {
            // a leader that restarted counts from 1 again; its ids are as new as any, so the latest to arrive wins
            log.info("NCCL bootstrap {} generation {} after generation {}: the leader restarted",
                    bootstrap.collective(), bootstrap.generation(), earlier.generation());
        }
        latest.put(bootstrap.collective(), bootstrap);
        notifyAll();
    }

    /**
     * The latest bootstrap of {@code collective} not taken before, waiting for one at most {@code timeout}.
     *
     * @throws CollectiveException TIMEOUT when none came within {@code timeout} (the leader is lost or did not
     *         lead yet: the step fails and the next one tries again); ABORTED when interrupted
     */
    public synchronized CollectiveBootstrap take(String collective, int rank, int size, Duration timeout) {
        if (!followed.contains(collective)) {
            throw fail(CollectiveException.Reason.INVALID_ARGUMENT, rank, size, "this worker does not follow "
                    + collective);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            CollectiveBootstrap next = latest.get(collective);
            if (next != null && !next.ncclUniqueId().equals(joined.get(collective))) {
                joined.put(collective, next.ncclUniqueId());
                return next;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw fail(CollectiveException.Reason.TIMEOUT, rank, size, "no NCCL unique id from rank 0 of "
                        + collective + " within " + timeout + (next == null ? "" : " newer than generation " + next.generation()));
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw fail(CollectiveException.Reason.ABORTED, rank, size,
                        "interrupted waiting for rank 0's NCCL unique id");
            }
        }
    }

    private static CollectiveException fail(CollectiveException.Reason reason, int rank, int size, String message) {
        return new CollectiveException(reason, CollectiveOperation.JOIN, rank, size, 0, message, null);
    }
}
