package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

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

    record KvState(long poolBytes, int requests, int pagesInUse) {
    }

    abstract ModelGraph graph();

    /** The deployment: the model's node groups (and kv_cache settings) on workers 0 and 1. */
    abstract String deploymentYaml();

    abstract ModelKernels kernels();

    @BeforeEach
    void startWorkers() {
        deployment = DeploymentConfig.parse(deploymentYaml(), "test");
        ModelGraph model = graph();
        graphs = WorkerGraphSplit.split(deployment, Map.of(model.modelName(), model));
        broker = new InProcessBroker();
        data = new TestConductor(dir);
        conductor = new ToyConductor(broker, data, graphs);
        KernelCatalog catalog = new KernelCatalog(List.of(kernels()));
        Map<String, io.mstar.deployment.KvCacheConfig> kv = new java.util.HashMap<>();
        deployment.models().forEach(m -> m.kvCache().ifPresent(c -> kv.put(m.name(), c)));
        w0 = new TestWorker(0, dir, broker, catalog, graphs, kv);
        w1 = new TestWorker(1, dir, broker, catalog, graphs, kv);
    }

    @AfterEach
    void everythingIsFreed() {
        try {
            for (TestWorker w : List.of(w0, w1)) {
                EngineSnapshot s = w.snapshot();
                assertThat(s.requests()).as("%s requests", w.id).isZero();
                assertThat(s.tensors().liveTensors()).as("%s live tensors", w.id).isZero();
                assertThat(s.readsInFlight()).as("%s reads in flight", w.id).isZero();
                // KV pools are taken at a node's first batch and kept until shutdown; every page is free again
                KvState kv = w.loop.ask(st -> new KvState(w.kv.poolBytes(), w.kv.requestsHoldingPages(),
                        w.kv.stats().values().stream().mapToInt(p -> p.pagesInUse()).sum())).block(TIMEOUT);
                assertThat(kv.requests()).as("%s requests holding KV pages", w.id).isZero();
                assertThat(kv.pagesInUse()).as("%s KV pages in use", w.id).isZero();
                assertThat(w.deviceBytes()).as("%s device bytes beyond the KV pools", w.id).isEqualTo(kv.poolBytes());
                assertThat(w.data.arenaOccupancy().liveSlots()).as("%s arena slots", w.id).isZero();
            }
            assertThat(data.store.liveTensorCount()).as("conductor tensors").isZero();
            assertThat(data.device.stats().bytesInUse()).as("conductor device bytes").isZero();
        } finally {
            w0.close();
            w1.close();
            data.close();
        }
    }
}
