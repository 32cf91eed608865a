package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Topics;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kernel.tts.cuda.CudaTensorParallelLmBackend;
import io.mstar.worker.tp.NcclBootstraps;
import io.mstar.worker.tp.TensorParallelProperties;

/**
 * The toy-tts {@code lm} on a tensor-parallel group of two in-process GPU workers on GPU 0, their collective the one
 * a worker makes ({@link RankCollectives}) with {@code gpu-collective=shared-memory}, as ranks sharing one GPU use:
 * text and audio byte for byte those of one worker running the same CUDA kernels on the whole model, in every step
 * mode. Fails, rather than skips, without a GPU or the PTX.
 */
@Tag("gpu")
class ToyTtsTensorParallelOnCudaGpuTests {

    @TempDir
    Path dir;

    @Test
    void textAndAudioOfATensorParallelLmOnOneGpuAreThoseOfOneGpuWorkerInEveryStepMode() throws Exception {
        if (!CudaTensorParallelLmBackend.available()) {
            throw new IllegalStateException(CudaTensorParallelLmBackend.unavailableReason().orElseThrow());
        }
        long seed = Seeds.of("ToyTtsTensorParallelOnCudaGpuTests");
        List<ToyTtsEngineTests.Req> reqs = ToyTtsTensorParallelEngineTests.requests(seed);
        List<ToyTtsEngineTests.Out> reference;
        try (TtsHarness h = new TtsHarness(dir.resolve("one"), TtsHarness.DISAGGREGATED, d -> {
            CudaTensorParallelLmBackend lm = CudaTensorParallelLmBackend.whole((CudaDevice) d, ToyTtsWeights.generate());
            return ToyTtsKernels.with(() -> lm);
        }, () -> new CudaDevice(0))) {
            h.recordFixedBytes(); // the weights, uploaded above
            reference = ToyTtsEngineTests.runAll(h, "one", reqs);
        }
        DeploymentConfig config = DeploymentConfig.parse(ToyTtsTensorParallelEngineTests.TP2, "test");
        TensorParallelProperties shared = new TensorParallelProperties(
                TensorParallelProperties.GpuCollective.SHARED_MEMORY);
        List<EngineProperties> modes = List.of(
                EngineProperties.defaults().withSteps(false, EngineProperties.Speculation.OFF),
                EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF),
                EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON));
        for (int m = 0; m < modes.size(); m++) {
            EngineProperties engine = modes.get(m);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            Topics topics = new Topics("gpu-tp-" + UUID.randomUUID().toString().substring(0, 8));
            List<ToyTtsEngineTests.Out> got;
            try (TtsHarness h = new TtsHarness(dir.resolve("tp2-" + m), ToyTtsTensorParallelEngineTests.TP2,
                    (worker, device) -> {
                        TensorParallelGroups.Member rank = TensorParallelGroups.of(config, EntityId.worker(worker),
                                ToyTtsModel.NAME).orElseThrow();
                        return ToyTtsKernels.tensorParallel(device, RankCollectives.of(rank, config, device, shared,
                                Duration.ofSeconds(20), rank.setup(config, engine), topics, null,
                                new NcclBootstraps(Set.of()), registry));
                    }, () -> new CudaDevice(0), engine)) {
                assertThat(h.w1.data.device().kind()).isEqualTo(DeviceKind.CUDA);
                // a rank uploads its shard at its first batch: one request first, then its weights are the baseline
                ToyTtsEngineTests.runAll(h, "warm-up", reqs.subList(0, 1));
                h.recordFixedBytes();
                got = ToyTtsEngineTests.runAll(h, "tp2", reqs);
                assertThat(h.broker.sentTo(h.w1.id.value(), ScheduleTPNode.class)).as("batches broadcast")
                        .isNotEmpty();
                assertThat(EngineMeters.collectiveJoins(registry, EngineMeters.HOST_STAGED).count())
                        .as("both ranks joined once, staged through the host").isEqualTo(2.0);
            } // close(): both workers at baseline, device bytes included
            ToyTtsTensorParallelEngineTests.assertSameOutputs(got, reference, "mode " + m + ", seed " + seed);
        }
    }
}
