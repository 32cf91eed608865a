package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Topics;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.tp.NcclBootstraps;
import io.mstar.worker.tp.RejoiningCollective;
import io.mstar.worker.tp.TensorParallelProperties;

/**
 * The collective a host rank gets from the deployment: the two ranks of a TP2 group meet in shared memory, and every
 * join is counted in {@code mstar_worker_collective_joins_total{transport="shared_memory"}}: one at the first call,
 * one more when the group is rebuilt after a rank went away.
 */
class RankCollectivesTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void hostRanksMeetInSharedMemoryAndEveryJoinIsCounted() throws Exception {
        DeploymentConfig config = DeploymentConfig.parse(ToyTtsTensorParallelEngineTests.TP2, "test");
        Topics topics = new Topics("ranks-" + UUID.randomUUID().toString().substring(0, 8));
        SimpleMeterRegistry r0 = new SimpleMeterRegistry();
        SimpleMeterRegistry r1 = new SimpleMeterRegistry();
        try (HostDevice d0 = new HostDevice("host-0", 1 << 20); HostDevice d1 = new HostDevice("host-1", 1 << 20);
                RejoiningCollective rank0 = rank(config, topics, 0, d0, r0);
                RejoiningCollective rank1 = rank(config, topics, 1, d1, r1)) {
            assertThat(joins(r0)).as("nothing joined before the first call").isZero();
            both(rank0, d0, rank1, d1);
            assertThat(joins(r0)).isEqualTo(1);
            assertThat(joins(r1)).isEqualTo(1);

            rank1.abort(); // rank 1 goes away: the group is over for both
            assertThatThrownBy(() -> sum(rank0, d0, 1f)).isInstanceOf(CollectiveException.class);
            both(rank0, d0, rank1, d1);
            assertThat(joins(r0)).as("rebuilt after the failure").isEqualTo(2);
            assertThat(joins(r1)).isEqualTo(2);
            assertThat(EngineMeters.collectiveJoins(r0, EngineMeters.NCCL).count()).isZero();
            assertThat(EngineMeters.collectiveJoins(r0, EngineMeters.HOST_STAGED).count()).isZero();
        }
    }

    private static RejoiningCollective rank(DeploymentConfig config, Topics topics, int worker, HostDevice device,
            SimpleMeterRegistry registry) {
        TensorParallelGroups.Member member = TensorParallelGroups.of(config, EntityId.worker(worker), ToyTtsModel.NAME)
                .orElseThrow();
        return RankCollectives.of(member, config, device, TensorParallelProperties.defaults(), TIMEOUT, "same", topics,
                null, new NcclBootstraps(Set.of()), registry);
    }

    private static double joins(SimpleMeterRegistry registry) {
        return EngineMeters.collectiveJoins(registry, EngineMeters.SHARED_MEMORY).count();
    }

    /** Both ranks sum 1 and 2 at once; each gets 3. */
    private static void both(RejoiningCollective a, HostDevice da, RejoiningCollective b, HostDevice db)
            throws Exception {
        CompletableFuture<Float> first = CompletableFuture.supplyAsync(() -> sum(a, da, 1f));
        assertThat(sum(b, db, 2f)).isEqualTo(3f);
        assertThat(first.get(2 * TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(3f);
    }

    private static float sum(RejoiningCollective rank, HostDevice device, float value) {
        DeviceBuffer buffer = device.allocate(Float.BYTES);
        try {
            ByteBuffer host = ByteBuffer.allocateDirect(Float.BYTES).order(ByteOrder.LITTLE_ENDIAN).putFloat(0, value);
            device.copyFromHost(host, buffer, 0);
            rank.allReduceSum(buffer, 0, 1);
            device.copyToHost(buffer, 0, host);
            return host.getFloat(0);
        } finally {
            device.free(buffer);
        }
    }
}
