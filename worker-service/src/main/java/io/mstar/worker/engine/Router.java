package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.InputSignals;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerMessage;

/**
 * Routes output edges (docs/request-flow.md, "Routing of one output edge"). Every routed copy takes one reference
 * on the tensor; the caller holds a safety reference across the call and drops it afterwards, so a tensor routed
 * nowhere is freed then and one routed n times lives until n acks or consumptions. Persisting is not a routed copy.
 * Owned by the engine loop.
 */
final class Router {

    private static final Logger log = LoggerFactory.getLogger(Router.class);

    /** Ingests a tensor into a node of the pass on this worker (taking its own reference). */
    interface LocalIngest {
        void ingest(NodeState node, String signal, long uuid);
    }

    private final EntityId self;
    private final Map<Integer, WorkerGraph> graphs;
    private final Function<String, ModelGraph> models;
    private final TensorLedger ledger;
    private final Outbox outbox;
    private final int inlineOutputMaxBytes;
    /** The parsed ids of the workers sent to: parsing validates with a regex, on every send of every token. */
    private final Map<String, EntityId> workerIds = new HashMap<>();

    Router(EntityId self, Map<Integer, WorkerGraph> graphs, Function<String, ModelGraph> models, TensorLedger ledger,
            Outbox outbox, int inlineOutputMaxBytes) {
        this.self = self;
        this.graphs = graphs;
        this.models = models;
        this.ledger = ledger;
        this.outbox = outbox;
        this.inlineOutputMaxBytes = inlineOutputMaxBytes;
    }

    /**
     * Routes {@code producer}'s outputs. A tensor-parallel follower's outputs are the leader's too: they go only to its
     * own nodes and the persist list, never to another worker or the client (docs/tensor-parallelism.md).
     */
    void route(WorkerRequest request, PartitionState partition, PartitionPass pass, String producer,
            List<GraphEdge> edges, Map<String, Long> tensors, NestedLoopIndices position, LocalIngest local) {
        boolean replica = follows(request, pass, producer);
        for (GraphEdge edge : edges) {
            Long uuid = tensors.get(edge.name());
            if (uuid == null) {
                log.debug("request {}: no tensor for edge '{}' this time", request.requestId, edge.name());
                continue;
            }
            if (edge.conductorNewToken()) {
                pass.newTokenCounts.merge(edge.name(), (int) ledger.tensor(uuid).elementCount(), Integer::sum);
            }
            if (edge.persist() || edge.nextNode().equals(SpecialDestinations.PERSIST_ONLY)) {
                ledger.persist(uuid);
                pass.persistSignals.computeIfAbsent(edge.name(), n -> new ArrayList<>()).add(ledger.published(uuid));
            }
            if (edge.isStreaming() && edge.targetPartition() != null) {
                if (!replica) {
                    stream(request, pass, edge, uuid);
                }
            } else if (edge.nextNode().equals(SpecialDestinations.EMIT_TO_CLIENT)) {
                if (!replica) {
                    emit(request, pass, edge, uuid, position);
                }
            } else if (!edge.nextNode().equals(SpecialDestinations.PERSIST_ONLY)) {
                toNode(request, partition, pass, edge, uuid, local, replica);
            }
        }
    }

    /**
     * A small output travels inline and takes no reference: the caller's safety reference frees it after this pass, and
     * nobody reads it. A larger one is published and held until the conductor acknowledges its read.
     */
    private void emit(WorkerRequest request, PartitionPass pass, GraphEdge edge, long uuid, NestedLoopIndices position) {
        ResultTensors result;
        TensorPointerInfo info = ledger.info(uuid);
        if (inline(info)) {
            GraphEdge carried = edge.toBuilder().tensorInfo(List.of(info)).build();
            result = new ResultTensors(request.requestId, edge.outputModality(), carried, position, Map.of(),
                    List.of(inlineBytes(uuid)));
        } else {
            ledger.hold(uuid, 1);
            GraphEdge carried = edge.toBuilder().tensorInfo(List.of(ledger.published(uuid))).build();
            result = new ResultTensors(request.requestId, edge.outputModality(), carried, position, Map.of());
        }
        request.unackedSends.add(outbox.toConductor(ConductorMessage.of(result)));
        pass.outputSignalNames.add(edge.name());
        pass.outputLoopIndices.put(edge.name(), position);
    }

    private void toNode(WorkerRequest request, PartitionState partition, PartitionPass pass, GraphEdge edge, long uuid,
            LocalIngest local, boolean replica) {
        NodeState node = pass.nodes.get(edge.nextNode());
        if (node != null) {
            ledger.hold(uuid, 1);
            local.ingest(node, edge.name(), uuid);
            return;
        }
        if (replica) {
            return;
        }
        WorkerGraph target = graphs.values().stream()
                .filter(g -> g.model().equals(request.model) && g.walk().equals(pass.walk)
                        && g.nodeNames().contains(edge.nextNode()))
                .findFirst().orElseThrow(() -> new EngineException(EngineException.Reason.BAD_MESSAGE,
                        "no worker graph of walk '" + pass.walk + "' runs node '" + edge.nextNode() + "'"));
        send(request, target, edge, uuid, partition.name, pass);
    }

    private void stream(WorkerRequest request, PartitionPass pass, GraphEdge edge, long uuid) {
        List<String> walks = models.apply(request.model).partitions().get(edge.targetPartition());
        WorkerGraph target = graphs.values().stream()
                .filter(g -> g.model().equals(request.model) && walks.contains(g.walk())
                        && g.nodeNames().contains(edge.nextNode()))
                .findFirst().orElseThrow(() -> new EngineException(EngineException.Reason.BAD_MESSAGE,
                        "no worker graph of partition '" + edge.targetPartition() + "' runs '" + edge.nextNode() + "'"));
        send(request, target, edge, uuid, edge.targetPartition(), pass);
    }

    /** Whether this worker is rank 1 or up of the worker graph of {@code pass} that runs {@code producer}. */
    private boolean follows(WorkerRequest request, PartitionPass pass, String producer) {
        List<String> workers = request.workersOf(pass, producer);
        return workers.size() > 1 && !workers.get(0).equals(self.value());
    }

    /**
     * One InputSignals per worker of {@code target}. A token-sized tensor travels inline, as an emitted one does, and
     * takes no reference: the receivers neither read nor acknowledge it. A larger one is published, and each message
     * is one routed copy, held until its receiver acknowledges the read.
     */
    private void send(WorkerRequest request, WorkerGraph target, GraphEdge edge, long uuid, String partitionName,
            PartitionPass pass) {
        List<String> workers = request.workerGraphToWorkers.get(target.id());
        if (workers == null || workers.isEmpty()) {
            throw new EngineException(EngineException.Reason.BAD_MESSAGE,
                    "worker_graph_to_workers has no workers for worker graph " + target.id());
        }
        TensorPointerInfo info = ledger.info(uuid);
        List<String> inlineData = List.of();
        if (inline(info)) {
            inlineData = List.of(inlineBytes(uuid));
        } else {
            info = ledger.published(uuid);
        }
        GraphEdge carried = edge.toBuilder().tensorInfo(List.of(info)).build();
        for (String worker : workers) {
            if (inlineData.isEmpty()) {
                ledger.hold(uuid, 1);
            }
            InputSignals signals = new InputSignals(request.requestId, List.of(carried), pass.info, partitionName, null,
                    inlineData);
            request.unackedSends.add(outbox.toWorker(workerIds.computeIfAbsent(worker, EntityId::parse),
                    WorkerMessage.of(signals)));
        }
    }

    /** Whether a tensor is small enough to travel inside its message ({@code inline-output-max-bytes}). */
    private boolean inline(TensorPointerInfo info) {
        return inlineOutputMaxBytes > 0 && info.nbytes() <= inlineOutputMaxBytes;
    }

    /** An {@code inline_data} entry: the tensor's bytes, base64. */
    private String inlineBytes(long uuid) {
        return Base64.getEncoder().encodeToString(ledger.hostBytes(uuid));
    }
}
