package io.mstar.worker.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/**
 * The test's conductor for the counter model, playing docs/request-flow.md message for message: NewRequests, the
 * counter policy between passes (prefill, decode while tokens remain, unpersist the old state, producer_done), reading
 * and acknowledging every ResultTensors, and the drain / ReadsDone / remove teardown, also after a FailRequests.
 * Runs on the test thread.
 */
final class CounterConductor {

    static final String DEFAULT = io.mstar.graph.ModelGraph.DEFAULT_PARTITION;
    static final EntityId W0 = EntityId.worker(0);
    static final EntityId W1 = EntityId.worker(1);

    /** One request as the conductor sees it. */
    static final class Run {
        final String id;
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
        String failure;
        final Set<String> readsDone = new HashSet<>();
        boolean draining;
        boolean removed;
        final Map<String, List<int[]>> outputs = new LinkedHashMap<>();
        final List<WorkerGraphsDone> reports = new ArrayList<>();

        Run(String id, int maxTokens, Integer stopAt) {
            this.id = id;
            this.maxTokens = maxTokens;
            this.stopAt = stopAt;
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

    CounterConductor(InProcessBroker broker, TestConductor data, List<WorkerGraph> graphs) {
        this.broker = broker;
        this.data = data;
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

    /** The three NewRequests of a counter request; answers them (not yet sent) so a test may reorder them. */
    List<Map.Entry<EntityId, WorkerMessage>> newRequests(String id, int[] tokens, int maxTokens, Integer stopAt) {
        Run run = new Run(id, maxTokens, stopAt);
        runs.put(id, run);
        TensorPointerInfo input = data.input(id, tokens);
        CurrentForwardPassInfo prefillInfo = info(run, CounterModel.PREFILL, DEFAULT, Map.of());
        List<Integer> defaultGraphs = List.of(prefill0, prefill1, decode);
        NewRequest toW0 = new NewRequest(id, defaultGraphs, placement, List.of(
                new GraphEdge(CounterModel.EMBED, CounterModel.TOKENS, List.of(input)),
                new GraphEdge(CounterModel.OFFSET, CounterModel.TOKENS, List.of(input))), prefillInfo);
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
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out; runs: " + describe());
            }
            ConductorMessage message = broker.conductor.poll(50, TimeUnit.MILLISECONDS);
            if (message != null) {
                handle(message);
            }
        }
    }

    void pumpUntilRemoved(Duration timeout) throws Exception {
        pumpUntil(() -> runs.values().stream().allMatch(r -> r.removed), timeout);
    }

    private String describe() {
        StringBuilder b = new StringBuilder();
        runs.values().forEach(r -> b.append(r.id).append(" default=").append(r.defaultDone).append(" detok=")
                .append(r.detokDone).append(" failure=").append(r.failure).append(" readsDone=").append(r.readsDone)
                .append(" removed=").append(r.removed).append("; "));
        return b.toString();
    }

    void handle(ConductorMessage message) throws Exception {
        Object body = message.body();
        if (body instanceof ResultTensors result) {
            Run run = runs.get(result.requestId());
            TensorPointerInfo info = result.graphEdge().tensorInfo().get(0);
            int[] values = data.read(result.requestId(), info);
            run.outputs.computeIfAbsent(result.graphEdge().name(), n -> new ArrayList<>()).add(values);
            broker.fromConductor(EntityId.parse(info.sourceEntity()), WorkerMessage.of(
                    new TensorReceived(result.requestId(), Map.of(info.uuid(), 1), List.of())));
        } else if (body instanceof WorkerGraphsDone done) {
            onDone(runs.get(done.requestId()), done);
        } else if (body instanceof FailRequests failed) {
            failed.errors().forEach((id, error) -> {
                Run run = runs.get(id);
                run.failure = error;
                teardown(run);
            });
        } else if (body instanceof ReadsDone readsDone) {
            Run run = runs.get(readsDone.requestId());
            run.readsDone.add(readsDone.entityId());
            if (run.draining && !run.removed && run.readsDone.containsAll(Set.of(W0.value(), W1.value()))) {
                broker.fromConductor(W0, WorkerMessage.of(new RemoveRequest(run.id)));
                broker.fromConductor(W1, WorkerMessage.of(new RemoveRequest(run.id)));
                data.removeRequest(run.id);
                run.removed = true;
            }
        }
    }

    private void onDone(Run run, WorkerGraphsDone done) {
        run.reports.add(done);
        if (run.draining) {
            return;
        }
        if (done.partitionName().equals(CounterModel.DETOK_PARTITION)) {
            if (done.partitionDone()) {
                run.detokDone = true;
            }
        } else if (done.workerGraphIds().contains(decode)) {
            int made = done.newTokenCounts().getOrDefault(CounterModel.TOKEN, 0);
            run.produced += made;
            TensorPointerInfo old = run.state;
            run.state = done.persistSignals().get(CounterModel.STATE).get(0);
            unpersist(old, run.stateHandouts, run.id);
            run.stateHandouts = 0;
            List<TensorPointerInfo> stopped = done.persistSignals().getOrDefault(CounterModel.STOPPED, List.of());
            if (!stopped.isEmpty() || run.produced >= run.maxTokens) {
                stopped.forEach(t -> unpersist(t, 0, run.id));
                unpersist(run.state, 0, run.id);
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
            teardown(run);
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

    private void unpersist(TensorPointerInfo tensor, int handouts, String id) {
        if (tensor != null) {
            broker.fromConductor(EntityId.parse(tensor.sourceEntity()),
                    WorkerMessage.of(new UnpersistTensors(id, Map.of(tensor.uuid(), handouts))));
        }
    }

    void teardown(Run run) {
        if (run.draining) {
            return;
        }
        run.draining = true;
        broker.fromConductor(W0, WorkerMessage.of(new DrainRequest(run.id)));
        broker.fromConductor(W1, WorkerMessage.of(new DrainRequest(run.id)));
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
