package io.mstar.worker.engine;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.messaging.EntityId;

/**
 * Node groups of {@code tp_size} > 1 on this worker (docs/tensor-parallelism.md). The collectives and the sharded
 * toy-tts lm exist, but the engine does not yet run a node in lockstep with its peers: left alone, every rank would
 * run the whole node as a replica and each would emit its outputs. A worker placed in such a group therefore refuses
 * to start, naming the key, rather than serve wrong results.
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
                            + "group of model " + model.name() + ", and this worker does not run nodes in lockstep yet "
                            + "(docs/tensor-parallelism.md); use tp_size 1");
                }
            }
        }
    }
}
