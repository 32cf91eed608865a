package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphSection;
import io.mstar.graph.Loop;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.NodeAndGraphWalk;
import io.mstar.graph.Parallel;
import io.mstar.graph.Sequential;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.profile.GraphTiming;
import io.mstar.request.CurrentForwardPassInfo;

/**
 * One forward pass of a (request, partition) on this worker: the worker graphs of one walk that list this worker,
 * their nodes' slots and loops, and what the pass reports in its {@code WorkerGraphsDone}. Owned by the engine loop.
 */
final class PartitionPass {

    final String walk;
    final CurrentForwardPassInfo info;
    final List<WorkerGraph> graphs;
    final Map<String, NodeState> nodes = new LinkedHashMap<>();
    final Map<String, LoopState> loops = new LinkedHashMap<>();
    /** This pass consumes its partition's final stream chunk. */
    boolean finalStreamChunk;
    boolean complete;

    // What WorkerGraphsDone reports.
    final Map<String, List<TensorPointerInfo>> persistSignals = new LinkedHashMap<>();
    final Map<String, Integer> newTokenCounts = new LinkedHashMap<>();
    final Set<String> outputSignalNames = new LinkedHashSet<>();
    final Map<String, NestedLoopIndices> outputLoopIndices = new LinkedHashMap<>();

    PartitionPass(CurrentForwardPassInfo info, List<WorkerGraph> graphs) {
        this.walk = info.graphWalk();
        this.info = info;
        this.graphs = List.copyOf(graphs);
        for (WorkerGraph graph : graphs) {
            collect(graph.piece(), null);
        }
    }

    private void collect(GraphSection section, LoopState loop) {
        if (section instanceof GraphNode node) {
            nodes.put(node.name(), new NodeState(node, loop));
        } else if (section instanceof Sequential seq) {
            seq.sections().forEach(s -> collect(s, loop));
        } else if (section instanceof Parallel par) {
            par.sections().forEach(s -> collect(s, loop));
        } else if (section instanceof Loop inner) {
            if (loop != null) {
                throw new EngineException(EngineException.Reason.UNSUPPORTED_GRAPH,
                        "loop '" + inner.name() + "' is nested in loop '" + loop.loop.name() + "'; nested loops are not run yet");
            }
            int count = info.dynamicLoopIterCounts().getOrDefault(inner.name(), inner.maxIters());
            LoopState state = new LoopState(inner, Math.max(1, Math.min(inner.maxIters(), count)));
            loops.put(inner.name(), state);
            collect(inner.section(), state);
        }
    }

    /** Where a node stands: its loop's iteration, the pass's forward index. */
    NestedLoopIndices position(NodeState node) {
        if (node.loop == null) {
            return new NestedLoopIndices(List.of(), Map.of(), info.fwdIndex());
        }
        return new NestedLoopIndices(List.of(node.loop.loop.name()), Map.of(node.loop.loop.name(), node.loop.iteration),
                info.fwdIndex());
    }

    /** Every node ran (each loop to its end). */
    boolean allRan() {
        for (NodeState node : nodes.values()) {
            if (node.loop == null ? !node.ran : !node.loop.done) {
                return false;
            }
        }
        return true;
    }

    List<Integer> graphIds() {
        List<Integer> ids = new ArrayList<>();
        graphs.forEach(g -> ids.add(g.id()));
        return ids;
    }

    /** What {@code WorkerGraphsDone.graph_timings} reports: the nodes that ran in this pass, in graph order. */
    Map<NodeAndGraphWalk, GraphTiming> timings() {
        Map<NodeAndGraphWalk, GraphTiming> timings = new LinkedHashMap<>();
        nodes.forEach((name, node) -> {
            if (node.execCount > 0) {
                timings.put(new NodeAndGraphWalk(name, walk),
                        new GraphTiming(name, walk, node.execCount, node.execSeconds, node.execSeconds, 0, 0));
            }
        });
        return timings;
    }
}
