package io.mstar.worker.engine;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.Topics;
import io.mstar.tensor.collective.HostStagedCollective;
import io.mstar.tensor.collective.NcclCollective;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.tp.NcclBootstraps;
import io.mstar.worker.tp.NcclJoin;
import io.mstar.worker.tp.RejoiningCollective;
import io.mstar.worker.tp.TensorParallelProperties;

/**
 * The collective a rank of a tensor-parallel group meets its peers in, by its device and
 * {@code mstar.worker.tensor-parallel.gpu-collective} (docs/tensor-parallelism.md#gpu-ranks): host ranks in the
 * shared-memory collective; GPU ranks through NCCL, rank 0 handing the unique id to its followers over the control
 * plane, or in shared memory staged through the host. Joined at the first call and again after a failure, each join
 * counted ({@code mstar_worker_collective_joins_total{transport}}).
 */
final class RankCollectives {

    /** The most one staged call copies through the host: the lm's all-gather of a long prefill is a few MiB. */
    static final long STAGING_BYTES = 1L << 30;

    private RankCollectives() {
    }

    /**
     * @param outbox where rank 0's NCCL unique ids go (its followers' inboxes)
     * @param bootstraps where a follower's arrive
     * @throws IllegalStateException when NCCL is asked for and does not load here
     */
    static RejoiningCollective of(TensorParallelGroups.Member rank, DeploymentConfig config, Device device,
            TensorParallelProperties tp, Duration timeout, String setup, Topics topics, Outbox outbox,
            NcclBootstraps bootstraps, MeterRegistry registry) {
        SharedMemoryCollectiveSettings shared = rank.collective(topics, timeout);
        if (!(device instanceof CudaDevice cuda)) {
            return new RejoiningCollective(rank.rank(), rank.size(), () -> SharedMemoryCollective.join(shared), device,
                    setup, joins(registry, EngineMeters.SHARED_MEMORY));
        }
        if (!tp.gpuCollective().nccl()) {
            HostDevice staging = new HostDevice(device.name() + "-collective-staging", STAGING_BYTES);
            return new RejoiningCollective(rank.rank(), rank.size(),
                    () -> new HostStagedCollective(SharedMemoryCollective.join(shared), staging, cuda), device, setup,
                    joins(registry, EngineMeters.HOST_STAGED));
        }
        NcclCollective.unavailableReason().ifPresent(reason -> {
            throw new IllegalStateException("mstar.worker.tensor-parallel.gpu-collective=" + tp.gpuCollective()
                    .name().toLowerCase().replace('_', '-') + " needs NCCL: " + reason + "; or set it to "
                    + "shared-memory for ranks of one machine (docs/tensor-parallelism.md#gpu-ranks)");
        });
        NcclJoin join = new NcclJoin(rank.collectiveName(topics), cuda, rank.rank(), rank.size(), timeout,
                rank.followers(config), outbox::toWorker, bootstraps);
        return new RejoiningCollective(rank.rank(), rank.size(), join, device, setup,
                joins(registry, EngineMeters.NCCL));
    }

    private static Runnable joins(MeterRegistry registry, String transport) {
        return EngineMeters.collectiveJoins(registry, transport)::increment;
    }
}
