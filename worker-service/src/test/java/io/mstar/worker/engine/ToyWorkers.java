package io.mstar.worker.engine;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;

/**
 * Two in-process workers running a test model (its graph, its deployment YAML, its kernels), a {@link ToyConductor},
 * and the leak check every test ends with: no request, tensor, device byte or arena slot left.
 */
abstract class ToyWorkers {

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    List<WorkerGraph> graphs;
    DeploymentConfig deployment;
    InProcessBroker broker;
    TestConductor data;
    ToyConductor conductor;
    TestWorker w0;
    TestWorker w1;

    abstract ModelGraph graph();

    /** The deployment: the model's node groups (and kv_cache settings) on workers 0 and 1. */
    abstract String deploymentYaml();

    abstract ModelKernels kernels();

    /** Both workers' engine settings; a test may run the pipeline off or speculate. */
    EngineProperties engineSettings() {
        return EngineProperties.defaults();
    }

    @BeforeEach
    void startWorkers() {
        deployment = DeploymentConfig.parse(deploymentYaml(), "test");
        ModelGraph model = graph();
        graphs = WorkerGraphSplit.split(deployment, Map.of(model.modelName(), model));
        broker = new InProcessBroker();
        data = new TestConductor(dir);
        conductor = new ToyConductor(broker, data, graphs);
        KernelCatalog catalog = new KernelCatalog(List.of(kernels()));
        Map<String, io.mstar.deployment.KvCacheConfig> kv = TestWorker.kvCachesOf(deployment);
        w0 = new TestWorker(0, dir, broker, d -> catalog, graphs, () -> new HostDevice(HostDevice.NAME, 64 << 20), kv,
                engineSettings());
        w1 = new TestWorker(1, dir, broker, d -> catalog, graphs, () -> new HostDevice(HostDevice.NAME, 64 << 20), kv,
                engineSettings());
    }

    @AfterEach
    void everythingIsFreed() {
        try {
            for (TestWorker w : List.of(w0, w1)) {
                w.assertAtBaseline(w.assertNoKvPagesHeld().poolBytes());
            }
            data.assertAtBaseline();
        } finally {
            w0.close();
            w1.close();
            data.close();
        }
    }
}
