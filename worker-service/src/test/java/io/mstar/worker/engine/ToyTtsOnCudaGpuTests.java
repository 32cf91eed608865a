package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kv.KvCache;

/**
 * toy-tts's CUDA kernels against the Java reference on GPU 0: logits within {@link #TOLERANCE} (absolute) for
 * batches of prefill and decode jobs over paged caches, and a whole greedy generation through two worker engines on
 * CUDA devices giving exactly the host run's text and audio. Fails, rather than skips, without a GPU or the PTX.
 */
@Tag("gpu")
class ToyTtsOnCudaGpuTests {

    /** Max |cuda - host| over every logit (logits are O(10); float32 summation order and expf/cosf differ). */
    static final float TOLERANCE = 2e-3f;
    static final SamplingConfig GREEDY = new SamplingConfig(null, 0.0, 0, 1.0, false, 1.0, 0L);

    @TempDir
    Path dir;

    @Test
    void cudaLogitsMatchTheHostWithinTheToleranceOverABatchOfPagedSequences() {
        if (!CudaLmBackend.available()) {
            throw new IllegalStateException(CudaLmBackend.unavailableReason().orElseThrow());
        }
        long seed = Seeds.of("ToyTtsOnCudaGpuTests");
        Random random = new Random(seed);
        ToyTtsWeights weights = ToyTtsWeights.generate();
        KvCacheConfig config = new KvCacheConfig(16, 256);
        try (CudaDevice gpu = new CudaDevice(0); HostDevice host = new HostDevice("host", 64 << 20)) {
            CudaLmBackend cuda = new CudaLmBackend(gpu, weights);
            HostLmBackend java = new HostLmBackend(weights);
            KvCache gpuCache = new KvCache(gpu, config, ToyTtsWeights.BYTES_PER_TOKEN);
            KvCache hostCache = new KvCache(host, config, ToyTtsWeights.BYTES_PER_TOKEN);
            int requests = 6;
            List<int[]> prompts = new ArrayList<>();
            for (int r = 0; r < requests; r++) {
                int[] p = new int[1 + random.nextInt(r == 0 ? 300 : 40)];
                p[0] = ToyTtsModel.BOS;
                for (int i = 1; i < p.length; i++) {
                    p[i] = random.nextInt(ToyTtsModel.BYTES);
                }
                prompts.add(p);
                gpuCache.addRequest("r" + r);
                hostCache.addRequest("r" + r);
            }
            float worst = 0;
            // prefill all in one batch, then 20 decode steps of the whole batch feeding random bytes
            for (int step = -1; step < 20; step++) {
                List<LmJob> gpuJobs = new ArrayList<>();
                List<LmJob> hostJobs = new ArrayList<>();
                for (int r = 0; r < requests; r++) {
                    int[] feed = step < 0 ? prompts.get(r) : new int[] {random.nextInt(ToyTtsModel.BYTES)};
                    int g = gpuCache.appendTokens("r" + r, feed.length);
                    int h = hostCache.appendTokens("r" + r, feed.length);
                    assertThat(g).isEqualTo(h);
                    gpuJobs.add(new LmJob(feed, g, gpuCache.pages("r" + r), true));
                    hostJobs.add(new LmJob(feed, h, hostCache.pages("r" + r), true));
                }
                float[][] a = cuda.run(gpu, gpuCache.pool(), gpuCache.layout(), gpuJobs);
                float[][] b = java.run(host, hostCache.pool(), hostCache.layout(), hostJobs);
                for (int r = 0; r < requests; r++) {
                    for (int v = 0; v < ToyTtsModel.VOCAB; v++) {
                        if (v == ToyTtsModel.BOS) {
                            assertThat(a[r][v]).isEqualTo(Float.NEGATIVE_INFINITY);
                            continue;
                        }
                        assertThat(a[r][v]).as("step %d request %d logit %d", step, r, v).isFinite();
                        worst = Math.max(worst, Math.abs(a[r][v] - b[r][v]));
                    }
                }
            }
            System.out.printf("[toy-tts] max |cuda - host| logit difference: %.3g (tolerance %.3g)%n", worst, TOLERANCE);
            assertThat(worst).isLessThanOrEqualTo(TOLERANCE);
            gpuCache.close();
            hostCache.close();
            cuda.close();
            assertThat(gpu.stats().bytesInUse()).isZero();
        }
    }

    @Test
    void aWholeGreedyGenerationOnCudaEqualsTheHostRun() throws Exception {
        if (!CudaLmBackend.available()) {
            throw new IllegalStateException(CudaLmBackend.unavailableReason().orElseThrow());
        }
        String[] prompts = {"Hello from the GPU", "a", "The quick brown fox jumps"};
        List<TtsHarness.Run> host = new ArrayList<>();
        try (TtsHarness h = new TtsHarness(dir.resolve("host"), TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            for (int i = 0; i < prompts.length; i++) {
                h.start("p" + i, prompts[i].getBytes(StandardCharsets.UTF_8), 120, GREEDY, 5L);
            }
            h.pumpUntilRemoved();
            host.addAll(h.runs.values());
        }
        List<TtsHarness.Run> gpu = new ArrayList<>();
        try (TtsHarness h = new TtsHarness(dir.resolve("gpu"), TtsHarness.DISAGGREGATED,
                d -> ToyTtsKernels.with(eager(new CudaLmBackend((CudaDevice) d, ToyTtsWeights.generate()))),
                () -> new CudaDevice(0))) {
            assertThat(h.w1.data.device().kind()).isEqualTo(DeviceKind.CUDA);
            h.recordFixedBytes(); // the weights each worker uploaded
            for (int i = 0; i < prompts.length; i++) {
                h.start("p" + i, prompts[i].getBytes(StandardCharsets.UTF_8), 120, GREEDY, 5L);
            }
            h.pumpUntilRemoved();
            gpu.addAll(h.runs.values());
        }
        for (int i = 0; i < prompts.length; i++) {
            assertThat(gpu.get(i).failure).isNull();
            assertThat(host.get(i).failure).isNull();
            assertThat(host.get(i).textBytes()).isNotEmpty();
            System.out.printf("[toy-tts] '%s' -> %d tokens, stopped by EOS: %s%n", prompts[i],
                    host.get(i).textBytes().length, host.get(i).stopped);
            assertThat(gpu.get(i).textBytes()).as(prompts[i]).isEqualTo(host.get(i).textBytes());
            assertThat(gpu.get(i).audioBytes()).as(prompts[i]).isEqualTo(host.get(i).audioBytes());
            assertThat(gpu.get(i).stopped).isEqualTo(host.get(i).stopped);
        }
    }

    @Test
    void onCudaTheStepsOnTheLoopPipelinedAndSpeculatedGiveTheSameTextAndAudio() throws Exception {
        if (!CudaLmBackend.available()) {
            throw new IllegalStateException(CudaLmBackend.unavailableReason().orElseThrow());
        }
        String[] prompts = {"Hello from the GPU", "a", "The quick brown fox jumps", "speculate"};
        SamplingConfig sampled = new SamplingConfig(null, 0.8, 40, 0.95, true, 1.0, 0L);
        SamplingConfig greedy = new SamplingConfig(null, 0.0, 0, 1.0, true, 1.0, 0L);
        java.util.Map<String, EngineProperties> modes = new java.util.LinkedHashMap<>();
        modes.put("on the loop", EngineProperties.defaults().withSteps(false, EngineProperties.Speculation.OFF));
        modes.put("pipelined", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF));
        modes.put("speculated", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.AUTO));
        java.util.Map<String, List<TtsHarness.Run>> runs = new java.util.LinkedHashMap<>();
        for (java.util.Map.Entry<String, EngineProperties> mode : modes.entrySet()) {
            try (TtsHarness h = new TtsHarness(dir.resolve(mode.getKey().replace(' ', '-')), TtsHarness.DISAGGREGATED,
                    d -> ToyTtsKernels.with(eager(new CudaLmBackend((CudaDevice) d, ToyTtsWeights.generate()))),
                    () -> new CudaDevice(0), mode.getValue())) {
                h.recordFixedBytes();
                for (int i = 0; i < prompts.length; i++) {
                    h.start("p" + i, prompts[i].getBytes(StandardCharsets.UTF_8), 200, i % 2 == 0 ? sampled : greedy,
                            7L + i);
                }
                h.pumpUntilRemoved();
                runs.put(mode.getKey(), List.copyOf(h.runs.values()));
                long[] speculation = {h.w0.speculation()[0] + h.w1.speculation()[0],
                        h.w0.speculation()[1] + h.w1.speculation()[1]};
                System.out.printf("[toy-tts] %s on CUDA: %d speculated steps, %d speculated calls voided%n",
                        mode.getKey(), speculation[0], speculation[1]);
                assertThat(speculation[0] > 0).as("%s: speculated", mode.getKey())
                        .isEqualTo(mode.getKey().equals("speculated"));
            } // close(): both workers at baseline
        }
        List<TtsHarness.Run> reference = runs.get("on the loop");
        runs.forEach((mode, got) -> {
            for (int i = 0; i < prompts.length; i++) {
                assertThat(got.get(i).failure).as("%s %s", mode, prompts[i]).isNull();
                assertThat(got.get(i).textBytes()).as("%s %s", mode, prompts[i]).hasSize(200)
                        .isEqualTo(reference.get(i).textBytes());
                assertThat(got.get(i).audioBytes()).as("%s %s", mode, prompts[i])
                        .isEqualTo(reference.get(i).audioBytes());
            }
        });
    }

    /**
     * Preemption by recompute on CUDA (docs/streaming-and-kv.md#preemption-by-recompute): four requests of 10 pages
     * each on an lm pool of 12 pages with no host pool, speculation on. A recomputed request's KV is written again by
     * one multi-token forward, and every request's text and audio equal those on a pool that holds them all.
     */
    @Test
    void onCudaRecomputedRequestsGiveTheTextAndAudioOfAPoolThatHoldsThemAll() throws Exception {
        if (!CudaLmBackend.available()) {
            throw new IllegalStateException(CudaLmBackend.unavailableReason().orElseThrow());
        }
        String[] prompts = {"Hello from the GPU", "a", "The quick brown fox jumps", "recompute"};
        SamplingConfig sampled = new SamplingConfig(null, 0.8, 40, 0.95, true, 1.0, 0L);
        java.util.Map<String, List<TtsHarness.Run>> runs = new java.util.LinkedHashMap<>();
        double recomputes = 0;
        for (String pool : new String[] {"roomy", "tight"}) {
            String yaml = pool.equals("roomy") ? TtsHarness.DISAGGREGATED
                    : io.mstar.model.ToyTtsDeployments.disaggregated(12);
            EngineProperties engine = EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON)
                    .withKvHostPoolFactor(0);
            try (TtsHarness h = new TtsHarness(dir.resolve(pool), yaml,
                    d -> ToyTtsKernels.with(eager(new CudaLmBackend((CudaDevice) d, ToyTtsWeights.generate()))),
                    () -> new CudaDevice(0), engine)) {
                h.recordFixedBytes();
                for (int i = 0; i < prompts.length; i++) {
                    h.start("p" + i, prompts[i].getBytes(StandardCharsets.UTF_8), 150, sampled, 11L + i);
                }
                h.pumpUntilRemoved();
                runs.put(pool, List.copyOf(h.runs.values()));
                if (pool.equals("tight")) {
                    recomputes = h.w1.registry.get(KvCaches.KV_MOVES).tags("move", "recompute").functionCounter()
                            .count();
                }
            } // close(): both workers at baseline, every page free
        }
        System.out.printf("[toy-tts] recompute on CUDA: %.0f requests preempted%n", recomputes);
        assertThat(recomputes).as("requests preempted by recompute").isPositive();
        for (int i = 0; i < prompts.length; i++) {
            assertThat(runs.get("tight").get(i).failure).as(prompts[i]).isNull();
            assertThat(runs.get("tight").get(i).textBytes()).as(prompts[i]).hasSize(150)
                    .isEqualTo(runs.get("roomy").get(i).textBytes());
            assertThat(runs.get("tight").get(i).audioBytes()).as(prompts[i])
                    .isEqualTo(runs.get("roomy").get(i).audioBytes());
        }
    }

    private static java.util.function.Supplier<io.mstar.worker.kernel.tts.LmBackend> eager(CudaLmBackend backend) {
        return () -> backend;
    }
}
