package io.mstar.worker.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/**
 * A minimal conductor for a test model of one partition ({@code default}) placed on two workers: each request runs a
 * list of passes; a pass sends its int32 inputs to the workers (NewRequest for the first, InputSignals after) and
 * ends when every worker with a local worker graph of the walk reported. Emitted tensors are read and acknowledged;
 * after the last pass or a FailRequests the request is drained and removed (both by {@link TestConductorLoop}). Runs
 * on the test thread.
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
    static final class Run extends TestConductorLoop.Request {
        final List<Pass> passes;
        int fwd;
        /** Reports of the current pass per worker graph. */
        final Map<Integer, Integer> passReports = new HashMap<>();
        /** Signal name to forward index to values, one array per ResultTensors in arrival order. */
        final Map<String, Map<Integer, List<int[]>>> outputs = new LinkedHashMap<>();

        Run(String id, List<Pass> passes) {
            super(id);
            this.passes = passes;
        }

        @Override
        String progress() {
            return "fwd=" + fwd + " reports=" + passReports;
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
    /** Workers 0 and 1, and any other the placement names. */
    private final List<EntityId> workers;
    /**
     * Every pass's max_tokens. The test models stop on their own step metadata and ignore it; a KV node's admission
     * reads it as the bound on a request's growth, so it is kept small enough for the tests' pools.
     */
    static final int MAX_TOKENS = 4;
    final Map<String, Run> runs = new LinkedHashMap<>();
    private final TestConductorLoop<Run> loop;

    /** Node group g on worker g. */
    ToyConductor(InProcessBroker broker, TestConductor data, List<WorkerGraph> graphs) {
        this(broker, data, graphs, g -> List.of(EntityId.worker(g.nodeGroupIndex()).value()));
    }

    /** Each worker graph on the workers {@code placement} names, rank 0 first. */
    ToyConductor(InProcessBroker broker, TestConductor data, List<WorkerGraph> graphs,
            java.util.function.Function<WorkerGraph, List<String>> placement) {
        this.broker = broker;
        this.data = data;
        this.graphs = graphs;
        java.util.TreeSet<Integer> ordinals = new java.util.TreeSet<>(List.of(0, 1));
        for (WorkerGraph g : graphs) {
            this.placement.put(g.id(), placement.apply(g));
            placement.apply(g).forEach(w -> ordinals.add(EntityId.parse(w).workerOrdinal()));
        }
        this.workers = ordinals.stream().map(EntityId::worker).toList();
        this.loop = new TestConductorLoop<>(broker, data, runs, this::onResult, this::onDone, workers);
    }

    void start(String id, List<Pass> passes) {
        Run run = new Run(id, passes);
        runs.put(id, run);
        List<Integer> ids = graphs.stream().map(WorkerGraph::id).toList();
        Pass first = passes.get(0);
        for (EntityId worker : workers) {
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
        return new CurrentForwardPassInfo(run.id, pass.walk(), false, run.fwd, pass.seed(), MAX_TOKENS, pass.sampling(),
                pass.stepMetadata(), null, CurrentForwardPassInfo.DEFAULT_PARTITION, null, null);
    }

    /** Aborts {@code id} as the conductor does: a drain to both workers now, the removal once both answered. */
    void abort(String id) {
        loop.drain(runs.get(id));
    }

    /** Handles conductor messages until {@code done} holds (a test may act between messages in it). */
    void pumpUntil(java.util.function.BooleanSupplier done, Duration timeout) throws Exception {
        loop.pumpUntil(done, timeout);
    }

    void pumpUntilRemoved(Duration timeout) throws Exception {
        loop.pumpUntilRemoved(timeout);
    }

    private void onResult(Run run, ResultTensors result) throws Exception {
        int[] values = loop.readAndAcknowledge(result, data::outputInts);
        run.outputs.computeIfAbsent(result.graphEdge().name(), n -> new HashMap<>())
                .computeIfAbsent(result.loopIndices().wgFwdPassIdx(), f -> new ArrayList<>()).add(values);
    }

    /** A pass is done once every worker of each of its worker graphs reported (each rank of a tensor-parallel group). */
    private void onDone(Run run, WorkerGraphsDone done) {
        done.workerGraphIds().forEach(id -> run.passReports.merge(id, 1, Integer::sum));
        String walk = run.passes.get(run.fwd).walk();
        if (graphs.stream().filter(g -> g.walk().equals(walk))
                .allMatch(g -> run.passReports.getOrDefault(g.id(), 0) >= placement.get(g.id()).size())) {
            run.passReports.clear();
            run.fwd++;
            if (run.fwd == run.passes.size()) {
                loop.drain(run);
            } else {
                Pass next = run.passes.get(run.fwd);
                for (EntityId worker : workers) {
                    List<GraphEdge> edges = edges(run, next, worker);
                    if (!edges.isEmpty()) {
                        broker.fromConductor(worker, WorkerMessage.of(new InputSignals(run.id, edges, info(run, next))));
                    }
                }
            }
        }
    }
}
