package io.mstar.worker.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/**
 * The test's conductor for the counter model, playing docs/request-flow.md message for message: NewRequests, the
 * counter policy between passes (prefill, decode while tokens remain, unpersist the old state, producer_done), reading
 * and acknowledging every ResultTensors, and (through {@link TestConductorLoop}) the drain / ReadsDone / remove
 * teardown, also after a FailRequests. Runs on the test thread.
 */
final class CounterConductor {

    static final String DEFAULT = io.mstar.graph.ModelGraph.DEFAULT_PARTITION;
    static final EntityId W0 = EntityId.worker(0);
    static final EntityId W1 = EntityId.worker(1);

    /** One request as the conductor sees it. */
    static final class Run extends TestConductorLoop.Request {
        final int maxTokens;
        final Integer stopAt;
        int fwd;
        final Set<Integer> prefillReported = new HashSet<>();
        TensorPointerInfo state;
        int stateHandouts;
        int produced;
        int given;
        boolean defaultDone;
        boolean detokDone;
        final Map<String, List<int[]>> outputs = new LinkedHashMap<>();

        Run(String id, int maxTokens, Integer stopAt) {
            super(id);
            this.maxTokens = maxTokens;
            this.stopAt = stopAt;
        }

        @Override
        String progress() {
            return "default=" + defaultDone + " detok=" + detokDone;
        }

        List<Integer> flat(String signal) {
            List<Integer> all = new ArrayList<>();
            outputs.getOrDefault(signal, List.of()).forEach(a -> {
                for (int v : a) {
                    all.add(v);
                }
            });
            return all;
        }

        List<Integer> chunkSizes(String signal) {
            return outputs.getOrDefault(signal, List.of()).stream().map(a -> a.length).toList();
        }
    }

    private final InProcessBroker broker;
    private final TestConductor data;
    final int prefill0;
    final int prefill1;
    final int decode;
    final int chunk;
    final Map<Integer, List<String>> placement = new LinkedHashMap<>();
    final Map<String, Run> runs = new LinkedHashMap<>();
    private final TestConductorLoop<Run> loop;

    CounterConductor(InProcessBroker broker, TestConductor data, List<WorkerGraph> graphs) {
        this.broker = broker;
        this.data = data;
        this.loop = new TestConductorLoop<>(broker, data, runs, this::onResult, this::onDone);
        for (WorkerGraph g : graphs) {
            placement.put(g.id(), List.of(EntityId.worker(g.nodeGroupIndex()).value()));
        }
        prefill0 = id(graphs, CounterModel.PREFILL, 0);
        prefill1 = id(graphs, CounterModel.PREFILL, 1);
        decode = id(graphs, CounterModel.DECODE, 1);
        chunk = id(graphs, CounterModel.CHUNK, 0);
    }

    private static int id(List<WorkerGraph> graphs, String walk, int group) {
        return graphs.stream().filter(g -> g.walk().equals(walk) && g.nodeGroupIndex() == group).findFirst().orElseThrow().id();
    }

    /** Whether the prompt travels inside worker 0's NewRequest too, as the conductor sends a small one. */
    boolean inlineInputs;

    /** The three NewRequests of a counter request; answers them (not yet sent) so a test may reorder them. */
    List<Map.Entry<EntityId, WorkerMessage>> newRequests(String id, int[] tokens, int maxTokens, Integer stopAt) {
        Run run = new Run(id, maxTokens, stopAt);
        runs.put(id, run);
        TensorPointerInfo input = data.input(id, tokens);
        CurrentForwardPassInfo prefillInfo = info(run, CounterModel.PREFILL, DEFAULT, Map.of());
        List<Integer> defaultGraphs = List.of(prefill0, prefill1, decode);
        List<String> inline = List.of();
        if (inlineInputs) { // as the conductor hands out a small prompt: its bytes in the message, once per edge
            ByteBuffer bytes = ByteBuffer.allocate(4 * tokens.length).order(ByteOrder.LITTLE_ENDIAN);
            Arrays.stream(tokens).forEach(bytes::putInt);
            String b64 = Base64.getEncoder().encodeToString(bytes.array());
            inline = List.of(b64, b64);
        }
        NewRequest toW0 = new NewRequest(id, defaultGraphs, placement, List.of(
                new GraphEdge(CounterModel.EMBED, CounterModel.TOKENS, List.of(input)),
                new GraphEdge(CounterModel.OFFSET, CounterModel.TOKENS, List.of(input))), prefillInfo, inline);
        NewRequest toW1 = new NewRequest(id, defaultGraphs, placement, List.of(), prefillInfo);
        NewRequest detok = new NewRequest(id, List.of(chunk), placement, List.of(),
                info(run, CounterModel.CHUNK, CounterModel.DETOK_PARTITION, Map.of()));
        return List.of(Map.entry(W0, WorkerMessage.of(toW0)), Map.entry(W1, WorkerMessage.of(toW1)),
                Map.entry(W0, WorkerMessage.of(detok)));
    }

    void start(String id, int[] tokens, int maxTokens, Integer stopAt) {
        newRequests(id, tokens, maxTokens, stopAt).forEach(e -> broker.fromConductor(e.getKey(), e.getValue()));
    }

    private CurrentForwardPassInfo info(Run run, String walk, String partition, Map<String, Integer> loops) {
        Map<String, String> meta = run.stopAt == null ? Map.of() : Map.of(CounterModel.STOP_AT, run.stopAt.toString());
        return new CurrentForwardPassInfo(run.id, walk, false, run.fwd, 7L, run.maxTokens, null, meta, null, partition,
                null, loops);
    }

    /** Handles conductor messages until {@code done} holds. */
    void pumpUntil(BooleanSupplier done, Duration timeout) throws Exception {
        loop.pumpUntil(done, timeout);
    }

    void pumpUntilRemoved(Duration timeout) throws Exception {
        loop.pumpUntilRemoved(timeout);
    }

    private void onResult(Run run, ResultTensors result) throws Exception {
        int[] values = loop.readAndAcknowledge(result, data::outputInts);
        run.outputs.computeIfAbsent(result.graphEdge().name(), n -> new ArrayList<>()).add(values);
    }

    private void onDone(Run run, WorkerGraphsDone done) {
        if (done.partitionName().equals(CounterModel.DETOK_PARTITION)) {
            if (done.partitionDone()) {
                run.detokDone = true;
            }
        } else if (done.workerGraphIds().contains(decode)) {
            int made = done.newTokenCounts().getOrDefault(CounterModel.TOKEN, 0);
            run.produced += made;
            TensorPointerInfo old = run.state;
            run.state = done.persistSignals().get(CounterModel.STATE).get(0);
            loop.unpersist(old, run.stateHandouts, run.id);
            run.stateHandouts = 0;
            List<TensorPointerInfo> stopped = done.persistSignals().getOrDefault(CounterModel.STOPPED, List.of());
            if (!stopped.isEmpty() || run.produced >= run.maxTokens) {
                stopped.forEach(t -> loop.unpersist(t, 0, run.id));
                loop.unpersist(run.state, 0, run.id);
                run.state = null;
                run.defaultDone = true;
                CurrentForwardPassInfo info = info(run, CounterModel.CHUNK, CounterModel.DETOK_PARTITION, Map.of());
                broker.fromConductor(W0, WorkerMessage.of(new InputSignals(run.id, List.of(), info,
                        CounterModel.DETOK_PARTITION, Set.of(DEFAULT))));
            } else {
                decode(run);
            }
        } else {
            run.prefillReported.addAll(done.workerGraphIds());
            if (done.persistSignals().containsKey(CounterModel.STATE)) {
                run.state = done.persistSignals().get(CounterModel.STATE).get(0);
            }
            if (run.prefillReported.containsAll(Set.of(prefill0, prefill1))) {
                decode(run);
            }
        }
        if (run.defaultDone && run.detokDone) {
            loop.drain(run);
        }
    }

    private void decode(Run run) {
        run.fwd++;
        run.given = Math.min(CounterModel.DECODE_MAX_ITERS, run.maxTokens - run.produced);
        CurrentForwardPassInfo info = info(run, CounterModel.DECODE, DEFAULT,
                Map.of(CounterModel.DECODE_LOOP, run.given));
        run.stateHandouts++;
        broker.fromConductor(W1, WorkerMessage.of(new InputSignals(run.id,
                List.of(new GraphEdge(CounterModel.STEP, CounterModel.STATE, List.of(run.state))), info)));
    }

    /** The predicted outputs of CounterModel's javadoc. */
    static int s0(int[] tokens) {
        int sum = 0;
        for (int t : tokens) {
            sum += t;
        }
        return 2 * sum + tokens.length;
    }

}
