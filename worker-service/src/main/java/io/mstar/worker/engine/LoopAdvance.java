package io.mstar.worker.engine;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.wire.StopLoops;
import io.mstar.wire.WorkerMessage;

/**
 * A loop's side of a node's outputs (docs/architecture.md#loops-and-streaming): loop-backs into next-iteration slots,
 * kept loop and accumulated outputs, the step to the next iteration or the loop's end, and {@code StopLoops} to the
 * peers running pieces of the same loop. Owned by the engine loop.
 */
final class LoopAdvance {

    private final EntityId self;
    private final Map<Integer, WorkerGraph> graphs;
    private final TensorLedger ledger;
    private final Router router;
    private final Outbox outbox;

    LoopAdvance(EntityId self, Map<Integer, WorkerGraph> graphs, TensorLedger ledger, Router router, Outbox outbox) {
        this.self = self;
        this.graphs = graphs;
        this.ledger = ledger;
        this.router = router;
        this.outbox = outbox;
    }

    /** A loop-back goes to its target's next-iteration slot (one reference); never routed if the loop ends. */
    void loopBack(PartitionPass pass, GraphEdge edge, Long uuid) {
        if (uuid == null) {
            return;
        }
        NodeState target = pass.nodes.get(edge.nextNode());
        if (target == null) {
            throw new EngineException(EngineException.Reason.UNSUPPORTED_GRAPH, "loop-back '" + edge.name() + "' to node '"
                    + edge.nextNode() + "' on another worker is not run yet");
        }
        ledger.hold(uuid, 1);
        Long old = target.next.put(edge.name(), uuid);
        if (old != null) {
            release(old);
        }
    }

    /** Keeps this iteration's loop outputs (replacing the last) and accumulated outputs, one reference each. */
    void keep(LoopState loop, Map<String, Long> outputs) {
        outputs.forEach((name, uuid) -> {
            if (loop.isLoopOutput(name)) {
                ledger.hold(uuid, 1);
                Long previous = loop.lastOutputs.put(name, uuid);
                if (previous != null) {
                    ledger.release(previous, 1);
                }
            }
            if (loop.isAccumulated(name)) {
                ledger.hold(uuid, 1);
                loop.accumulate(name, uuid);
            }
        });
    }

    /**
     * Once every body node ran: either the next iteration (loop-backs become current, external inputs re-ingested,
     * body nodes offered to {@code schedule}) or the end (loop-backs released, outputs routed, peers told of a
     * local finish).
     */
    void endIterationIfDone(WorkerRequest request, PartitionState partition, PartitionPass pass, LoopState loop,
            Router.LocalIngest local, Consumer<NodeState> schedule) {
        for (String name : loop.bodyNodes) {
            NodeState body = pass.nodes.get(name);
            if (body != null && !body.ran) {
                return;
            }
        }
        int finished = loop.iteration;
        loop.iteration++;
        List<NodeState> body = loop.bodyNodes.stream().map(pass.nodes::get).filter(n -> n != null).toList();
        if (!loop.finishRequested && loop.iteration < loop.iterations) {
            for (NodeState node : body) {
                node.ran = false;
                node.current.putAll(node.next);
                node.next.clear();
            }
            loop.retained.forEach((key, uuid) -> {
                ledger.hold(uuid, 1);
                NodeState target = pass.nodes.get(key.destination());
                Long old = target.current.put(key.name(), uuid);
                if (old != null) {
                    release(old);
                }
            });
            body.forEach(schedule);
            return;
        }
        loop.done = true;
        for (NodeState node : body) {
            node.next.values().forEach(this::release); // loop-backs of a finished loop are never routed
            node.next.clear();
            node.current.values().forEach(this::release);
            node.current.clear();
        }
        loop.retained.values().forEach(uuid -> ledger.release(uuid, 1));
        loop.retained.clear();
        NestedLoopIndices last = new NestedLoopIndices(List.of(loop.loop.name()), Map.of(loop.loop.name(), finished),
                pass.info.fwdIndex());
        String producer = loop.bodyNodes.iterator().next(); // a loop runs within one worker graph
        try {
            router.route(request, partition, pass, producer, loop.loop.outputs(), loop.lastOutputs, last, local);
            for (GraphEdge edge : loop.loop.accumulatedOutputs()) {
                List<Long> entries = loop.accumulated.getOrDefault(edge.name(), List.of());
                for (int i = 0; i < entries.size(); i++) {
                    NestedLoopIndices at = new NestedLoopIndices(List.of(loop.loop.name()), Map.of(loop.loop.name(), i),
                            pass.info.fwdIndex());
                    router.route(request, partition, pass, producer, List.of(edge), Map.of(edge.name(), entries.get(i)), at,
                            local);
                }
            }
        } finally {
            loop.lastOutputs.values().forEach(uuid -> ledger.release(uuid, 1));
            loop.lastOutputs.clear();
            loop.accumulated.values().forEach(list -> list.forEach(uuid -> ledger.release(uuid, 1)));
            loop.accumulated.clear();
        }
        if (loop.finishedLocally) {
            sendStopLoops(request, partition, pass, loop, last);
        }
    }

    /** Peers running a piece of the same loop stop it too (a disaggregated loop). */
    private void sendStopLoops(WorkerRequest request, PartitionState partition, PartitionPass pass, LoopState loop,
            NestedLoopIndices at) {
        Set<String> peers = new TreeSet<>();
        for (int id : partition.workerGraphIds) {
            WorkerGraph graph = graphs.get(id);
            List<String> workers = request.workerGraphToWorkers.getOrDefault(id, List.of());
            // the other ranks of this worker's own tensor-parallel group end the loop in the same step by themselves
            if (graph.walk().equals(pass.walk) && graph.piece().loops().containsKey(loop.loop.name())
                    && !workers.contains(self.value())) {
                peers.addAll(workers);
            }
        }
        peers.remove(self.value());
        for (String peer : peers) {
            StopLoops stop = new StopLoops(request.requestId, Set.of(loop.loop.name()), partition.name,
                    Map.of(loop.loop.name(), at));
            request.unackedSends.add(outbox.toWorker(EntityId.parse(peer), WorkerMessage.of(stop)));
        }
    }

    private void release(long uuid) {
        if (uuid != WorkerEngine.NO_TENSOR) {
            ledger.release(uuid, 1);
        }
    }
}
