package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.model.CounterModel;
import io.mstar.model.ModelGraphs;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.counter.CounterHostKernels;

/**
 * Two in-process workers of the built-in deployment (embed, offset, detok on worker 0; count, step on worker 1), a
 * test conductor, and the leak check every test ends with: no request, tensor, device byte or arena slot left.
 */
abstract class TwoWorkers {

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    /** The counter's worker graphs, numbered as the services number them (every model of the deployment split). */
    final List<WorkerGraph> graphs = WorkerGraphSplit.split(DeploymentConfig.loadDefault(),
            ModelGraphs.of(DeploymentConfig.loadDefault().models().stream().map(m -> m.name()).toList())).stream()
            .filter(g -> g.model().equals(CounterModel.NAME)).toList();
    InProcessBroker broker;
    TestConductor data;
    CounterConductor conductor;
    TestWorker w0;
    TestWorker w1;

    /** The kernels the workers run; a test may wrap one. */
    ModelKernels kernels() {
        return CounterHostKernels.kernels();
    }

    /** The device each worker opens (a GPU test gives a CUDA device). */
    Device openDevice() {
        return new HostDevice(HostDevice.NAME, 64 << 20);
    }

    /** Both workers' engine settings; a test may run the pipeline off or speculate. */
    EngineProperties engineSettings() {
        return EngineProperties.defaults();
    }

    /** The kernels a worker runs on {@code device}. */
    KernelCatalog catalogFor(Device device) {
        return new KernelCatalog(List.of(kernels()));
    }

    @BeforeEach
    void startWorkers() {
        broker = new InProcessBroker();
        data = new TestConductor(dir);
        conductor = new CounterConductor(broker, data, graphs);
        w0 = new TestWorker(0, dir, broker, this::catalogFor, graphs, this::openDevice, Map.of(), engineSettings());
        w1 = new TestWorker(1, dir, broker, this::catalogFor, graphs, this::openDevice, Map.of(), engineSettings());
    }

    @AfterEach
    void everythingIsFreed() {
        if (w0 == null || w1 == null) { // start-up failed (a GPU test without a GPU): that failure is the report
            for (AutoCloseable c : Arrays.asList(w0, w1, data)) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        // the start-up failure is already reported
                    }
                }
            }
            return;
        }
        try {
            for (TestWorker w : List.of(w0, w1)) {
                EngineSnapshot s = w.assertAtBaseline(0); // the counter keeps nothing between requests
                assertThat(s.tensors().errors().values().stream().mapToLong(Long::longValue).sum())
                        .as("%s tensor store errors %s", w.id, s.tensors().errors()).isZero();
            }
            data.assertAtBaseline();
        } finally {
            w0.close();
            w1.close();
            data.close();
        }
    }
}
