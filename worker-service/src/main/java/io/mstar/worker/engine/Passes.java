package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.NameAndDestination;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.WorkerGraph;
import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.InputSignals;
import io.mstar.worker.kernel.NodeResult;

/**
 * A partition's passes on this worker (docs/request-flow.md, docs/worker-runtime.md#passes): a pass starts with its
 * walk's local worker graphs, its nodes take inputs into their slots and join the ready set when complete, a node's
 * result releases its inputs and routes its outputs (loop-backs into the next iteration), and a pass whose every node
 * ran is reported. Owned by the engine loop.
 */
final class Passes {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    private final OwnerThread owner;
    private final EntityId self;
    private final Map<Integer, WorkerGraph> graphs;
    private final TensorLedger ledger;
    private final Router router;
    private final LoopAdvance loops;
    private final Scheduler scheduler;
    private final PassReports reports;
    /** Signals that waited for the pass before to end: they start the next one (the intake's path). */
    private final BiConsumer<WorkerRequest, InputSignals> resume;

    Passes(OwnerThread owner, EntityId self, Map<Integer, WorkerGraph> graphs, TensorLedger ledger, Router router,
            LoopAdvance loops, Scheduler scheduler, PassReports reports, BiConsumer<WorkerRequest, InputSignals> resume) {
        this.owner = owner;
        this.self = self;
        this.graphs = graphs;
        this.ledger = ledger;
        this.router = router;
        this.loops = loops;
        this.scheduler = scheduler;
        this.reports = reports;
        this.resume = resume;
    }

    boolean runsHere(WorkerRequest request, WorkerGraph graph) {
        List<String> workers = request.workerGraphToWorkers.get(graph.id());
        return workers != null && workers.contains(self.value());
    }

    /** The partition's pass of {@code info}'s walk, over the walk's worker graphs that run here (none: no pass). */
    void start(WorkerRequest request, PartitionState partition, CurrentForwardPassInfo info) {
        owner.check();
        List<WorkerGraph> local = partition.workerGraphIds.stream().map(graphs::get)
                .filter(g -> g.walk().equals(info.graphWalk()) && runsHere(request, g)).toList();
        if (local.isEmpty()) {
            partition.pass = null;
            return;
        }
        PartitionPass pass = new PartitionPass(info, local);
        partition.pass = pass;
        LoopStops.onPassStart(partition, pass);
        for (NodeState node : pass.nodes.values()) {
            maybeSchedule(request, partition, pass, node);
        }
    }

    /** A node's input for the pass (one reference, or {@link WorkerEngine#NO_TENSOR}); a stale one is released. */
    void ingest(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node, String signal,
            long uuid) {
        owner.check();
        if (pass.complete || !request.schedulable() || partition.pass != pass) {
            releaseSlot(uuid);
            return;
        }
        Long old = node.current.putIfAbsent(signal, uuid);
        if (old != null) {
            log.warn("request {}: node {} already has '{}' for this iteration; the second one is dropped",
                    request.requestId, node.node.name(), signal);
            releaseSlot(uuid);
            return;
        }
        LoopState loop = node.loop;
        NameAndDestination key = new NameAndDestination(signal, node.node.name());
        if (loop != null && loop.externalInputs.contains(key) && !loop.retained.containsKey(key)
                && uuid != WorkerEngine.NO_TENSOR) {
            ledger.hold(uuid, 1);
            loop.retained.put(key, uuid);
        }
        maybeSchedule(request, partition, pass, node);
    }

    private void maybeSchedule(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node) {
        if (request.schedulable() && node.ready()) {
            scheduler.add(new ReadyItem(request, partition, pass, node));
        }
    }

    void releaseSlot(long uuid) {
        if (uuid != WorkerEngine.NO_TENSOR) {
            ledger.release(uuid, 1);
        }
    }

    /**
     * A node's outputs for one request: its inputs released, its outputs stored and routed, loops advanced, the pass
     * reported once every node ran. {@code continuation}: the call goes on in the speculated step {@code next}, which
     * reads these loop-backs, so each gets a reference held until {@code next} completed.
     */
    void complete(ReadyItem item, NodeResult result, double seconds, Step.Continuation continuation, Step next) {
        owner.check();
        WorkerRequest request = item.request();
        PartitionState partition = item.partition();
        PartitionPass pass = item.pass();
        NodeState node = item.node();
        node.timed(seconds);
        NestedLoopIndices position = pass.position(node);
        node.current.values().forEach(this::releaseSlot);
        node.current.clear();
        node.ran = true;
        Map<String, Long> outputs = new LinkedHashMap<>();
        result.outputs().forEach((name, tensor) ->
                outputs.put(name, ledger.storeOutput(request.requestId, tensor, node.node.name(), pass.walk)));
        if (continuation != null) {
            for (String signal : continuation.loopBacks()) {
                Long uuid = outputs.get(signal);
                if (uuid != null) {
                    ledger.hold(uuid, 1);
                    next.held.add(uuid);
                }
            }
        }
        Router.LocalIngest local = (target, signal, uuid) -> ingest(request, partition, pass, target, signal, uuid);
        try {
            LoopState loop = node.loop;
            List<GraphEdge> now = new ArrayList<>();
            for (GraphEdge edge : node.node.outputs()) {
                if (loop == null) {
                    now.add(edge);
                } else if (loop.loopBack.contains(new NameAndDestination(edge.name(), edge.nextNode()))) {
                    loops.loopBack(pass, edge, outputs.get(edge.name()));
                } else if (loop.bodyNodes.contains(edge.nextNode()) || SpecialDestinations.isSpecial(edge.nextNode())
                        || (edge.isStreaming() && edge.targetPartition() != null)) {
                    now.add(edge);
                }
                // Other edges leave the loop only as its declared outputs, after the last iteration.
            }
            if (loop != null) {
                loops.keep(loop, outputs);
                if (result.finish()) {
                    loop.finishRequested = true;
                    loop.finishedLocally = true;
                }
            }
            router.route(request, partition, pass, node.node.name(), now, outputs, position, local);
        } finally {
            outputs.values().forEach(uuid -> ledger.release(uuid, 1)); // the safety hold
        }
        if (node.loop != null) {
            loops.endIterationIfDone(request, partition, pass, node.loop, local,
                    body -> maybeSchedule(request, partition, pass, body));
        }
        completeIfDone(request, partition, pass);
    }

    private void completeIfDone(WorkerRequest request, PartitionState partition, PartitionPass pass) {
        if (pass.complete || !pass.allRan()) {
            return;
        }
        pass.complete = true;
        reports.report(request, partition, pass);
        while (partition.idle() && !partition.pending.isEmpty() && request.schedulable()) {
            resume.accept(request, partition.pending.poll());
        }
    }
}
