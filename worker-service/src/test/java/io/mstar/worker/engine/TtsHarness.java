package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.EntityId;
import io.mstar.model.ToyTtsDeployments;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;

/**
 * Two in-process workers serving toy-tts under a given deployment, and a test conductor playing the toy-tts policy
 * message for message (as {@code ToyTtsPolicy} in the conductor decides): NewRequests to the lm and codec partitions,
 * prefill, decode passes of {@code min(16, tokens left)} iterations with the pass seed {@code seed + pass}, done on
 * {@code stopped} or {@code max_tokens}, the old {@code state} unpersisted, {@code producer_done} to the codec; every
 * output read and acknowledged and drain / ReadsDone / remove (also for an abort) by {@link TestConductorLoop}.
 * {@link #close} asserts both workers are back at baseline: no request, tensor, KV page or device byte beyond the KV
 * pools.
 */
final class TtsHarness implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String MODEL = ToyTtsModel.NAME;

    static final String DISAGGREGATED = ToyTtsDeployments.disaggregated(256);
    static final String COLOCATED = ToyTtsDeployments.colocated(256);

    /** One request as this conductor sees it. */
    static final class Run extends TestConductorLoop.Request {
        final byte[] prompt;
        final int maxTokens;
        final SamplingConfig sampling;
        final long seed;
        int lmPass;
        /** lm reports of the current pass per worker graph: every rank of a tensor-parallel group reports. */
        final Map<Integer, Integer> lmReports = new HashMap<>();
        /** The persisted states of the pass so far (one per rank), and of the pass before with their hand-outs. */
        final List<TensorPointerInfo> newStates = new ArrayList<>();
        final List<TensorPointerInfo> newStopped = new ArrayList<>();
        final Map<TensorPointerInfo, Integer> states = new LinkedHashMap<>();
        int produced;
        boolean stopped;
        boolean lmDone;
        boolean codecDone;
        int codecReports;
        int codecDoneReports;
        /** Outputs that came inside their ResultTensors, and outputs read through the transport. */
        int inlineOutputs;
        int readOutputs;
        /** (pass, iteration) to the text byte. */
        final TreeMap<Long, Integer> text = new TreeMap<>();
        final List<byte[]> audio = new ArrayList<>();

        Run(String id, byte[] prompt, int maxTokens, SamplingConfig sampling, long seed) {
            super(id);
            this.prompt = prompt;
            this.maxTokens = maxTokens;
            this.sampling = sampling;
            this.seed = seed;
        }

        @Override
        String progress() {
            return "lm=" + lmDone + " codec=" + codecDone;
        }

        byte[] textBytes() {
            byte[] out = new byte[text.size()];
            int i = 0;
            for (int b : text.values()) {
                out[i++] = (byte) b;
            }
            return out;
        }

        byte[] audioBytes() {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            audio.forEach(all::writeBytes);
            return all.toByteArray();
        }
    }

    final DeploymentConfig deployment;
    final List<WorkerGraph> graphs;
    final InProcessBroker broker = new InProcessBroker();
    final TestConductor data;
    final TestWorker w0;
    final TestWorker w1;
    final Map<Integer, List<String>> placement = new LinkedHashMap<>();
    final Map<String, Run> runs = new LinkedHashMap<>();
    private final Map<String, Long> fixedBytes = new HashMap<>();
    private java.util.function.ToLongFunction<TestWorker> heldForLife = w -> 0;
    private final TestConductorLoop<Run> loop;

    TtsHarness(Path dir, String yaml, Function<Device, ModelKernels> kernels, Supplier<Device> devices) {
        this(dir, yaml, kernels, devices, EngineProperties.defaults());
    }

    /** ... with both workers' engine settings (pipeline, speculation). */
    TtsHarness(Path dir, String yaml, Function<Device, ModelKernels> kernels, Supplier<Device> devices,
            EngineProperties engine) {
        this(dir, yaml, (worker, d) -> kernels.apply(d), devices, engine);
    }

    /** ... with each worker's own kernels ({@code kernels} takes the worker's ordinal), e.g. its tensor-parallel rank. */
    TtsHarness(Path dir, String yaml, java.util.function.BiFunction<Integer, Device, ModelKernels> kernels,
            Supplier<Device> devices, EngineProperties engine) {
        deployment = DeploymentConfig.parse(yaml, "test");
        graphs = WorkerGraphSplit.split(deployment, Map.of(MODEL, ToyTtsModel.graph()));
        ModelConfig model = deployment.models().get(0);
        for (WorkerGraph g : graphs) {
            placement.put(g.id(), model.nodeGroups().get(g.nodeGroupIndex()).workers().stream()
                    .map(w -> EntityId.worker(w).value()).toList());
        }
        Map<String, KvCacheConfig> kv = TestWorker.kvCachesOf(deployment);
        data = new TestConductor(dir);
        loop = new TestConductorLoop<>(broker, data, runs, this::onResult, this::onDone);
        w0 = new TestWorker(0, dir, broker, d -> new KernelCatalog(List.of(kernels.apply(0, d))), graphs, devices, kv,
                engine);
        w1 = new TestWorker(1, dir, broker, d -> new KernelCatalog(List.of(kernels.apply(1, d))), graphs, devices, kv,
                engine);
    }

    TtsHarness(Path dir, String yaml, Function<Device, ModelKernels> kernels) {
        this(dir, yaml, kernels, () -> new HostDevice(HostDevice.NAME, 64 << 20));
    }

    private List<WorkerGraph> graphsOf(String walk) {
        return graphs.stream().filter(g -> g.walk().equals(walk)).toList();
    }

    private Set<String> workersOf(String walk) {
        Set<String> workers = new HashSet<>();
        graphsOf(walk).forEach(g -> workers.addAll(placement.get(g.id())));
        return workers;
    }

    private List<Integer> partitionGraphs(String... walks) {
        List<String> w = List.of(walks);
        return graphs.stream().filter(g -> w.contains(g.walk())).map(WorkerGraph::id).sorted().toList();
    }

    void start(String id, byte[] prompt, int maxTokens, SamplingConfig sampling, long seed) {
        Run run = new Run(id, prompt, maxTokens, sampling, seed);
        runs.put(id, run);
        TensorPointerInfo input = data.input(id, prompt, ToyTtsModel.INPUT_DTYPE, 1);
        CurrentForwardPassInfo prefill = info(run, ToyTtsModel.PREFILL, ToyTtsModel.LM_PARTITION, 0, Map.of());
        Set<String> lmWorkers = workersOf(ToyTtsModel.PREFILL);
        for (String w : lmWorkers) {
            broker.fromConductor(EntityId.parse(w), WorkerMessage.of(new NewRequest(id,
                    partitionGraphs(ToyTtsModel.PREFILL, ToyTtsModel.DECODE), placement,
                    List.of(new GraphEdge(ToyTtsModel.LM, ToyTtsModel.TEXT_INPUT, List.of(input))), prefill)));
        }
        for (String w : workersOf(ToyTtsModel.CODEC_WALK)) {
            broker.fromConductor(EntityId.parse(w), WorkerMessage.of(new NewRequest(id,
                    partitionGraphs(ToyTtsModel.CODEC_WALK), placement, List.of(),
                    info(run, ToyTtsModel.CODEC_WALK, ToyTtsModel.CODEC_PARTITION, 0, Map.of()))));
        }
    }

    private CurrentForwardPassInfo info(Run run, String walk, String partition, int pass, Map<String, Integer> loops) {
        Map<String, MultiSamplingConfig> sampling = new TreeMap<>();
        if (run.sampling != null) {
            sampling.put(ToyTtsModel.LM, new MultiSamplingConfig(run.sampling, Map.of()));
            sampling.put(ToyTtsModel.CODEC, new MultiSamplingConfig(run.sampling, Map.of()));
        }
        return new CurrentForwardPassInfo(run.id, walk, false, pass, run.seed + pass, run.maxTokens, sampling, Map.of(),
                null, partition, null, loops);
    }

    void pumpUntil(BooleanSupplier done) throws Exception {
        loop.pumpUntil(done, TIMEOUT);
    }

    void pumpUntilRemoved() throws Exception {
        loop.pumpUntilRemoved(TIMEOUT);
    }

    private void onResult(Run run, ResultTensors result) throws Exception {
        byte[] bytes = loop.readAndAcknowledge(result, data::outputBytes);
        TensorPointerInfo info = result.graphEdge().tensorInfo().get(0);
        // Both routes to the client: a token inline, an audio chunk over the limit read through the transport.
        assertThat(result.inline()).as("%s of %d bytes inline", result.graphEdge().name(), info.nbytes())
                .isEqualTo(info.nbytes() <= EngineProperties.defaults().inlineOutputMaxBytes());
        assertThat(bytes).hasSize((int) info.nbytes());
        if (result.inline()) {
            run.inlineOutputs++;
        } else {
            run.readOutputs++;
        }
        if (result.graphEdge().name().equals(ToyTtsModel.TEXT)) {
            assertThat(result.modality()).isEqualTo(ToyTtsModel.TEXT_MODALITY);
            assertThat(info.dtype()).isEqualTo("int32");
            int value = (bytes[0] & 0xFF) | (bytes[1] & 0xFF) << 8 | (bytes[2] & 0xFF) << 16 | bytes[3] << 24;
            long key = (long) result.loopIndices().wgFwdPassIdx() << 32
                    | result.loopIndices().loopIndices().getOrDefault(ToyTtsModel.DECODE_LOOP, 0);
            run.text.put(key, value);
        } else {
            assertThat(result.graphEdge().name()).isEqualTo(ToyTtsModel.AUDIO);
            assertThat(result.modality()).isEqualTo(ToyTtsModel.AUDIO_MODALITY);
            assertThat(info.dtype()).isEqualTo("int16");
            run.audio.add(bytes);
        }
    }

    private void onDone(Run run, WorkerGraphsDone done) {
        if (done.partitionName().equals(ToyTtsModel.CODEC_PARTITION)) {
            run.codecReports++;
            if (done.partitionDone()) {
                run.codecDoneReports++;
                run.codecDone = true;
            }
        } else {
            // as the conductor does: the pass ends once every rank reported; token counts are rank 0's, persisted
            // signals every rank's
            done.workerGraphIds().forEach(id -> run.lmReports.merge(id, 1, Integer::sum));
            run.newStates.addAll(done.persistSignals().getOrDefault(ToyTtsModel.STATE, List.of()));
            run.newStopped.addAll(done.persistSignals().getOrDefault(ToyTtsModel.STOPPED, List.of()));
            if (done.isFirstTpRank()) {
                run.produced += done.newTokenCounts().getOrDefault(ToyTtsModel.TEXT, 0);
            }
            String walk = run.lmPass == 0 ? ToyTtsModel.PREFILL : ToyTtsModel.DECODE;
            if (graphsOf(walk).stream().anyMatch(g -> run.lmReports.getOrDefault(g.id(), 0) < placement.get(g.id()).size())) {
                return;
            }
            run.lmReports.clear();
            Map<TensorPointerInfo, Integer> old = new LinkedHashMap<>(run.states);
            run.states.clear();
            run.newStates.forEach(t -> run.states.put(t, 0));
            run.newStates.clear();
            List<TensorPointerInfo> stopped = List.copyOf(run.newStopped);
            run.newStopped.clear();
            if (walk.equals(ToyTtsModel.DECODE)) {
                old.forEach((t, handouts) -> loop.unpersist(t, handouts, run.id));
                if (!stopped.isEmpty() || run.produced >= run.maxTokens) {
                    run.stopped = !stopped.isEmpty();
                    stopped.forEach(t -> loop.unpersist(t, 0, run.id));
                    run.states.keySet().forEach(t -> loop.unpersist(t, 0, run.id));
                    run.states.clear();
                    run.lmDone = true;
                    CurrentForwardPassInfo info = info(run, ToyTtsModel.CODEC_WALK, ToyTtsModel.CODEC_PARTITION, 0,
                            Map.of());
                    for (String w : workersOf(ToyTtsModel.CODEC_WALK)) {
                        broker.fromConductor(EntityId.parse(w), WorkerMessage.of(new InputSignals(run.id, List.of(),
                                info, ToyTtsModel.CODEC_PARTITION, Set.of(ToyTtsModel.LM_PARTITION))));
                    }
                } else {
                    decode(run);
                }
            } else {
                decode(run);
            }
        }
        if (run.lmDone && run.codecDone) {
            loop.drain(run);
        }
    }

    private void decode(Run run) {
        run.lmPass++;
        int iterations = Math.min(ToyTtsModel.DECODE_MAX_ITERS, run.maxTokens - run.produced);
        CurrentForwardPassInfo info = info(run, ToyTtsModel.DECODE, ToyTtsModel.LM_PARTITION, run.lmPass,
                Map.of(ToyTtsModel.DECODE_LOOP, iterations));
        for (String w : workersOf(ToyTtsModel.DECODE)) {
            // each rank of a group gets back the state it persisted itself
            TensorPointerInfo state = run.states.keySet().stream().filter(t -> t.sourceEntity().equals(w)).findFirst()
                    .orElse(run.states.keySet().iterator().next());
            run.states.merge(state, 1, Integer::sum);
            broker.fromConductor(EntityId.parse(w), WorkerMessage.of(new InputSignals(run.id,
                    List.of(new GraphEdge(ToyTtsModel.LM, ToyTtsModel.STATE, List.of(state))), info,
                    ToyTtsModel.LM_PARTITION, null)));
        }
    }

    /** Drain and remove: an abort when called before the request finished. */
    void teardown(Run run) {
        loop.drain(run);
    }

    /** Runs one request to its end and answers it. */
    Run run(String id, byte[] prompt, int maxTokens, SamplingConfig sampling, long seed) throws Exception {
        start(id, prompt, maxTokens, sampling, seed);
        pumpUntil(() -> runs.get(id).removed);
        return runs.get(id);
    }

    void assertBaseline() {
        for (TestWorker w : List.of(w0, w1)) {
            w.assertAtBaseline(w.assertNoKvPagesHeld().poolBytes() + fixedBytes.getOrDefault(w.id.value(), 0L)
                    + heldForLife.applyAsLong(w));
        }
        data.assertAtBaseline();
    }

    /** Device bytes a worker's kernels hold for its life by design (resident tables), beyond weights and pools. */
    void heldForLife(java.util.function.ToLongFunction<TestWorker> bytes) {
        heldForLife = bytes;
    }

    /** Records device bytes held beyond the KV pools now (weights a GPU backend uploaded) as the baseline. */
    void recordFixedBytes() {
        for (TestWorker w : List.of(w0, w1)) {
            fixedBytes.put(w.id.value(), w.deviceBytes() - w.kvState().poolBytes());
        }
    }

    @Override
    public void close() {
        try {
            assertBaseline();
        } finally {
            w0.close();
            w1.close();
            data.close();
        }
    }
}
