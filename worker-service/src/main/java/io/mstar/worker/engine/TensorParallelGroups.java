package io.mstar.worker.engine;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Topics;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.worker.kernel.tts.ToyTtsWeights;

/**
 * This worker's places in the deployment's node groups of {@code tp_size} > 1 (docs/tensor-parallelism.md): which
 * rank it is of which instance, and the group's collective. The engine runs such nodes in lockstep ({@link Lockstep});
 * a node kernel shards only where one exists: the toy-tts {@code lm}, on host devices or GPUs, whose ranks meet in the
 * collective of {@link RankCollectives}. A worker placed in any other group refuses to start, naming the key.
 */
public final class TensorParallelGroups {

    /**
     * This worker as rank {@code rank} of instance {@code instance} (a block of {@code size} workers) of node group
     * {@code group} of model {@code model}.
     */
    public record Member(String model, int group, int instance, int rank, int size) {

        /** The collective's name: unique per deployment (topic prefix), model, group and instance. */
        public String collectiveName(Topics topics) {
            return topics.prefix() + "." + model + ".g" + group + ".i" + instance;
        }

        /** The other ranks of this worker's instance, in rank order, when this worker is rank 0; else none. */
        public List<EntityId> followers(DeploymentConfig config) {
            if (rank != 0) {
                return List.of();
            }
            ModelConfig m = config.models().stream().filter(c -> c.name().equals(model)).findFirst().orElseThrow();
            List<Integer> workers = m.nodeGroups().get(group).workers();
            return workers.subList(instance * size + 1, (instance + 1) * size).stream().map(EntityId::worker).toList();
        }

        public SharedMemoryCollectiveSettings collective(Topics topics, Duration timeout) {
            return SharedMemoryCollectiveSettings.of(collectiveName(topics), rank, size, timeout);
        }

        /**
         * What every rank must have alike, in words: the model's KV cache and this worker's host pool factor (a
         * follower replays the leader's offloads on a host pool of its own) and lockstep timeout.
         */
        String setup(DeploymentConfig config, EngineProperties engine) {
            String kv = config.models().stream().filter(m -> m.name().equals(model)).findFirst()
                    .flatMap(ModelConfig::kvCache).map(Object::toString).orElse("none");
            return "kv_cache " + kv + ", mstar.worker.engine.kv-host-pool-factor " + engine.kvHostPoolFactor()
                    + ", mstar.worker.engine.lockstep-timeout " + engine.lockstepTimeout();
        }
    }

    private TensorParallelGroups() {
    }

    /** This worker's membership in a tensor-parallel group of {@code model}, if the deployment places it in one. */
    public static Optional<Member> of(DeploymentConfig config, EntityId self, String model) {
        for (ModelConfig m : config.models()) {
            if (!m.name().equals(model)) {
                continue;
            }
            for (int g = 0; g < m.nodeGroups().size(); g++) {
                NodeGroupConfig group = m.nodeGroups().get(g);
                int at = group.workers().indexOf(self.workerOrdinal());
                if (group.tpSize() > 1 && at >= 0) {
                    return Optional.of(new Member(model, g, at / group.tpSize(), at % group.tpSize(), group.tpSize()));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Throws {@link EngineException} ({@code UNSUPPORTED_GRAPH}) when {@code self} is a rank of a group of tp_size > 1
     * whose nodes have no sharded kernel here: anything but the toy-tts {@code lm}, or a tp_size that does not split
     * it. Host and GPU ranks alike ({@link RankCollectives}).
     */
    static void refuseUnsupported(DeploymentConfig config, EntityId self) {
        for (int m = 0; m < config.models().size(); m++) {
            ModelConfig model = config.models().get(m);
            for (int g = 0; g < model.nodeGroups().size(); g++) {
                NodeGroupConfig group = model.nodeGroups().get(g);
                if (group.tpSize() < 2 || !group.workers().contains(self.workerOrdinal())) {
                    continue;
                }
                String key = "models[" + m + "].node_groups[" + g + "]";
                if (!model.name().equals(ToyTtsModel.NAME) || !group.nodeNames().equals(List.of(ToyTtsModel.LM))) {
                    throw new EngineException(EngineException.Reason.UNSUPPORTED_GRAPH, key + ".node_names: "
                            + group.nodeNames() + " of model " + model.name() + " on a tensor-parallel group of tp_size "
                            + group.tpSize() + "; only the toy-tts lm has a sharded kernel (docs/tensor-parallelism.md)");
                }
                try {
                    ToyTtsWeights.checkTpSize(group.tpSize());
                } catch (IllegalArgumentException e) {
                    throw new EngineException(EngineException.Reason.UNSUPPORTED_GRAPH, key + ".tp_size: "
                            + e.getMessage());
                }
            }
        }
    }
}
