package io.mstar.conductor.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.model.Step;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;

/**
 * Where a pass's inputs go, and what its workers are told about it (docs/request-flow.md; docs/conductor.md,
 * Policies): a step's signals become edges per worker over the request's placement, and the hand-outs those edges
 * count are settled again at unpersist. Sends nothing; {@link RequestLifecycle} sends what it works out here.
 *
 * <p>Functions of an {@link ActiveRequest}, called on the lifecycle loop that owns it; the hand-out counts they
 * write are the request's, so nothing here is shared.
 */
final class PassRouting {

    private PassRouting() {
    }

    /**
     * Turns a step's inputs into edges per worker: one edge per (signal, consuming node of the walk), to every
     * worker of that node's worker graph (a rank of a tensor-parallel group: its own descriptors, see {@link #ownOf});
     * each placement of a worker-held descriptor counts one hand-out.
     */
    static Map<String, List<GraphEdge>> route(ActiveRequest request, Step step) {
        List<WorkerGraph> wgs = request.topology.workerGraphsOfWalk(step.walk());
        Map<String, List<GraphEdge>> byWorker = new TreeMap<>();
        step.inputs().forEach((signal, descriptors) -> {
            List<String> consumers = request.topology.inputConsumers(step.walk(), signal);
            if (consumers.isEmpty()) {
                throw new ConductorException(ErrorType.MODEL_ERROR, "walk " + step.walk() + " takes no input '" + signal + "'");
            }
            for (String node : consumers) {
                WorkerGraph wg = wgs.stream().filter(g -> g.nodeNames().contains(node)).findFirst().orElseThrow(() ->
                        new ConductorException(ErrorType.MODEL_ERROR, "no worker graph of walk " + step.walk() + " runs " + node));
                List<String> ranks = request.placement.get(wg.id());
                for (String worker : ranks) {
                    List<TensorPointerInfo> own = ranks.size() > 1 ? ownOf(worker, descriptors) : descriptors;
                    byWorker.computeIfAbsent(worker, w -> new ArrayList<>()).add(new GraphEdge(node, signal, own));
                    for (TensorPointerInfo d : own) {
                        if (!EntityId.CONDUCTOR.value().equals(d.sourceEntity())) {
                            request.handOuts.merge(d.uuid(), 1, Integer::sum);
                        }
                    }
                }
            }
        });
        return byWorker;
    }

    /**
     * What a rank of a tensor-parallel group gets of a signal every rank persisted (one descriptor each): its own, so
     * that each reads locally what it wrote. A signal from elsewhere (the conductor, another worker) goes whole.
     */
    private static List<TensorPointerInfo> ownOf(String worker, List<TensorPointerInfo> descriptors) {
        List<TensorPointerInfo> own = descriptors.stream().filter(d -> worker.equals(d.sourceEntity())).toList();
        return own.isEmpty() ? descriptors : own;
    }

    /** What every worker of the run's current walk is told about its pass. */
    static CurrentForwardPassInfo passInfo(ActiveRequest request, ActiveRequest.PartitionRun run) {
        Map<String, MultiSamplingConfig> sampling = new TreeMap<>();
        if (request.submission.sampling() != null) {
            for (GraphWalk walk : request.topology.graph().walks()) {
                for (GraphNode node : walk.root().nodes().values()) {
                    sampling.put(node.name(), new MultiSamplingConfig(request.submission.sampling(), Map.of()));
                }
            }
        }
        // The seed advances by one per pass of the partition, so each pass samples differently and reproducibly.
        return new CurrentForwardPassInfo(request.id(), run.step.walk(), false, run.passIndex,
                request.baseSeed + run.passIndex, request.submission.maxTokens(), sampling, run.step.stepMetadata(),
                null, run.name, null, run.step.dynamicLoopIterCounts());
    }

    /** The workers of the worker graphs of {@code walk} (all of the step's partition's current walk). */
    static Set<String> workersOfWalk(ActiveRequest request, String walk) {
        Set<String> workers = new TreeSet<>();
        for (WorkerGraph wg : request.topology.workerGraphsOfWalk(walk)) {
            workers.addAll(request.placement.get(wg.id()));
        }
        return workers;
    }

    /**
     * The {@code UnpersistTensors} counts per producer for {@code descriptors}: each worker-held uuid with how many
     * times it was handed out, which settles those hand-outs. The conductor's own inputs are left out: they wait for
     * removal.
     */
    static Map<String, Map<Long, Integer>> settleHandOuts(ActiveRequest request, List<TensorPointerInfo> descriptors) {
        Map<String, Map<Long, Integer>> byProducer = new TreeMap<>();
        for (TensorPointerInfo d : descriptors) {
            if (EntityId.CONDUCTOR.value().equals(d.sourceEntity())) {
                continue;
            }
            Integer handed = request.handOuts.remove(d.uuid());
            byProducer.computeIfAbsent(d.sourceEntity(), p -> new TreeMap<>()).put(d.uuid(), handed == null ? 0 : handed);
        }
        return byProducer;
    }
}
