package io.mstar.worker.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
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
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/**
 * A minimal conductor for a test model of one partition ({@code default}) placed on two workers: each request runs a
 * list of passes; a pass sends its int32 inputs to the workers (NewRequest for the first, InputSignals after) and
 * ends when every worker with a local worker graph of the walk reported. Emitted tensors are read and acknowledged;
 * after the last pass or a FailRequests the request is drained and removed. Runs on the test thread.
 */
final class ToyConductor {

    /** An input edge for a node on a worker: int32 {@code values}, or uint8 {@code bytes} when those are given. */
    record Input(EntityId worker, String node, String signal, int[] values, byte[] bytes) {

        Input(EntityId worker, String node, String signal, int[] values) {
            this(worker, node, signal, values, null);
        }
    }

    /** One pass: its walk, inputs, step metadata and per-node sampling configs. */
    record Pass(String walk, List<Input> inputs, Map<String, String> stepMetadata,
            Map<String, io.mstar.request.MultiSamplingConfig> sampling, long seed) {

        Pass(String walk, List<Input> inputs, Map<String, String> stepMetadata) {
            this(walk, inputs, stepMetadata, null, 7L);
        }
    }

    /** One request as this conductor sees it. */
    static final class Run {
        final String id;
        final List<Pass> passes;
        int fwd;
        final Set<String> reported = new java.util.HashSet<>();
        String failure;
        boolean draining;
        boolean removed;
        final Set<String> readsDone = new java.util.HashSet<>();
        final List<WorkerGraphsDone> reports = new ArrayList<>();
        /** Signal name to forward index to values, one array per ResultTensors in arrival order. */
        final Map<String, Map<Integer, List<int[]>>> outputs = new LinkedHashMap<>();

        Run(String id, List<Pass> passes) {
            this.id = id;
            this.passes = passes;
        }

        /** The first value of each ResultTensors of {@code signal} in pass {@code fwd}. */
        List<Integer> firsts(String signal, int fwd) {
            return outputs.getOrDefault(signal, Map.of()).getOrDefault(fwd, List.of()).stream().map(a -> a[0]).toList();
        }
    }

    static final EntityId W0 = EntityId.worker(0);
    static final EntityId W1 = EntityId.worker(1);

    private final InProcessBroker broker;
    private final TestConductor data;
    private final List<WorkerGraph> graphs;
    private final Map<Integer, List<String>> placement = new LinkedHashMap<>();
    final Map<String, Run> runs = new LinkedHashMap<>();

    ToyConductor(InProcessBroker broker, TestConductor data, List<WorkerGraph> graphs) {
        this.broker = broker;
        this.data = data;
        this.graphs = graphs;
        for (WorkerGraph g : graphs) {
            placement.put(g.id(), List.of(EntityId.worker(g.nodeGroupIndex()).value()));
        }
    }

    void start(String id, List<Pass> passes) {
        Run run = new Run(id, passes);
        runs.put(id, run);
        List<Integer> ids = graphs.stream().map(WorkerGraph::id).toList();
        Pass first = passes.get(0);
        for (EntityId worker : List.of(W0, W1)) {
            broker.fromConductor(worker, WorkerMessage.of(new NewRequest(id, ids, placement,
                    edges(run, first, worker), info(run, first))));
        }
    }

    private List<GraphEdge> edges(Run run, Pass pass, EntityId worker) {
        List<GraphEdge> edges = new ArrayList<>();
        for (Input in : pass.inputs()) {
            if (in.worker().equals(worker)) {
                TensorPointerInfo tensor = in.bytes() != null ? data.input(run.id, in.bytes()) : data.input(run.id, in.values());
                edges.add(new GraphEdge(in.node(), in.signal(), List.of(tensor)));
            }
        }
        return edges;
    }

    private CurrentForwardPassInfo info(Run run, Pass pass) {
        return new CurrentForwardPassInfo(run.id, pass.walk(), false, run.fwd, pass.seed(), 1000, pass.sampling(),
                pass.stepMetadata(), null, CurrentForwardPassInfo.DEFAULT_PARTITION, null, null);
    }

    private Set<String> workersOf(String walk) {
        Set<String> workers = new java.util.HashSet<>();
        graphs.stream().filter(g -> g.walk().equals(walk)).forEach(g -> workers.addAll(placement.get(g.id())));
        return workers;
    }

    void pumpUntilRemoved(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!runs.values().stream().allMatch(r -> r.removed)) {
            if (System.nanoTime() > deadline) {
                Map<String, String> states = new TreeMap<>();
                runs.values().forEach(r -> states.put(r.id, "fwd=" + r.fwd + " reported=" + r.reported + " failure="
                        + r.failure + " readsDone=" + r.readsDone));
                throw new AssertionError("timed out: " + states);
            }
            ConductorMessage message = broker.conductor.poll(50, TimeUnit.MILLISECONDS);
            if (message != null) {
                handle(message);
            }
        }
    }

    private void handle(ConductorMessage message) throws Exception {
        Object body = message.body();
        if (body instanceof ResultTensors result) {
            Run run = runs.get(result.requestId());
            TensorPointerInfo info = result.graphEdge().tensorInfo().get(0);
            int[] values = data.read(result.requestId(), info);
            run.outputs.computeIfAbsent(result.graphEdge().name(), n -> new HashMap<>())
                    .computeIfAbsent(result.loopIndices().wgFwdPassIdx(), f -> new ArrayList<>()).add(values);
            broker.fromConductor(EntityId.parse(info.sourceEntity()), WorkerMessage.of(
                    new TensorReceived(result.requestId(), Map.of(info.uuid(), 1), List.of())));
        } else if (body instanceof WorkerGraphsDone done) {
            Run run = runs.get(done.requestId());
            run.reports.add(done);
            if (run.draining) {
                return;
            }
            graphs.stream().filter(g -> done.workerGraphIds().contains(g.id()))
                    .forEach(g -> run.reported.addAll(placement.get(g.id())));
            if (run.reported.containsAll(workersOf(run.passes.get(run.fwd).walk()))) {
                run.reported.clear();
                run.fwd++;
                if (run.fwd == run.passes.size()) {
                    teardown(run);
                } else {
                    Pass next = run.passes.get(run.fwd);
                    for (EntityId worker : List.of(W0, W1)) {
                        List<GraphEdge> edges = edges(run, next, worker);
                        if (!edges.isEmpty()) {
                            broker.fromConductor(worker, WorkerMessage.of(new InputSignals(run.id, edges, info(run, next))));
                        }
                    }
                }
            }
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

    private void teardown(Run run) {
        if (run.draining) {
            return;
        }
        run.draining = true;
        broker.fromConductor(W0, WorkerMessage.of(new DrainRequest(run.id)));
        broker.fromConductor(W1, WorkerMessage.of(new DrainRequest(run.id)));
    }
}
