package io.mstar.worker.engine;

import io.mstar.graph.ModelGraph;

/** {@link ToyWorkers} serving {@link KvCacheEngineTests}' KV toy model (lm on worker 0, 10 pages of 4). */
abstract class ToyLmWorkers extends ToyWorkers {

    @Override
    ModelGraph graph() {
        return KvCacheEngineTests.toyLm();
    }

    @Override
    String deploymentYaml() {
        return KvCacheEngineTests.toyLmDeployment();
    }
}
