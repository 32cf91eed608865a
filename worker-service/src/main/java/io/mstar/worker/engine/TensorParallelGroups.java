package io.mstar.worker.engine;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.messaging.EntityId;

/**
 * Node groups of {@code tp_size} > 1 on this worker (docs/tensor-parallelism.md). The engine runs their nodes in
 * lockstep ({@link Lockstep}), but no node kernel of the worker joins a collective yet: every rank would run the whole
 * node. A worker placed in such a group therefore refuses to start, naming the key, rather than pretend to shard.
 */
final class TensorParallelGroups {

    private TensorParallelGroups() {
    }

    /** Throws {@link EngineException} ({@code UNSUPPORTED_GRAPH}) when {@code self} is a rank of a group of tp_size > 1. */
    static void refuseLockstep(DeploymentConfig config, EntityId self) {
        for (int m = 0; m < config.models().size(); m++) {
            ModelConfig model = config.models().get(m);
            for (int g = 0; g < model.nodeGroups().size(); g++) {
                NodeGroupConfig group = model.nodeGroups().get(g);
                if (group.tpSize() > 1 && group.workers().contains(self.workerOrdinal())) {
                    throw new EngineException(EngineException.Reason.UNSUPPORTED_GRAPH, "models[" + m + "].node_groups["
                            + g + "].tp_size: " + group.tpSize() + " places " + self.value() + " in a tensor-parallel "
                            + "group of model " + model.name() + ", and this worker's kernels do not shard nodes yet "
                            + "(docs/tensor-parallelism.md); use tp_size 1");
                }
            }
        }
    }
}
