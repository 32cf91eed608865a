package io.mstar.conductor.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.NameAndDestination;
import io.mstar.graph.SectionInputsOutputs;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;

/**
 * One served model as the conductor routes it: its graph, its worker graphs (the same split every worker
 * computes) and replica placement. Owned by the lifecycle loop (the round-robin positions change).
 */
final class ModelTopology {

    private final ModelConfig config;
    private final ModelGraph graph;
    private final List<WorkerGraph> workerGraphs;
    private final int[] nextInstance;
    /** Per walk, per input signal: the nodes that consume it, in name order. Fixed by the graph, so worked out once. */
    private final Map<String, Map<String, List<String>>> inputConsumers = new TreeMap<>();
    /** Per partition: the other partitions its walks feed through streaming edges, in name order. */
    private final Map<String, Set<String>> streamConsumers = new TreeMap<>();

    ModelTopology(ModelConfig config, ModelGraph graph, List<WorkerGraph> allWorkerGraphs) {
        this.config = config;
        this.graph = graph;
        this.workerGraphs = allWorkerGraphs.stream().filter(wg -> wg.model().equals(config.name())).toList();
        this.nextInstance = new int[config.nodeGroups().size()];
        for (GraphWalk walk : graph.walks()) {
            Map<String, Set<String>> consumers = new TreeMap<>();
            SectionInputsOutputs io = walk.root().inputsOutputs();
            // A loop's carried signal (counter's state) is a loop-back pair, not an external input: its first value
            // still comes from outside.
            for (NameAndDestination in : io.externalInputs()) {
                consumers.computeIfAbsent(in.name(), n -> new TreeSet<>()).add(in.destination());
            }
            for (NameAndDestination in : io.loopBack()) {
                consumers.computeIfAbsent(in.name(), n -> new TreeSet<>()).add(in.destination());
            }
            Map<String, List<String>> bySignal = new TreeMap<>();
            consumers.forEach((signal, nodes) -> bySignal.put(signal, List.copyOf(nodes)));
            inputConsumers.put(walk.name(), bySignal);
        }
        graph.partitions().forEach((partition, walks) -> {
            Set<String> consumers = new TreeSet<>();
            for (String walkName : walks) {
                for (GraphNode node : walk(walkName).root().nodes().values()) {
                    for (GraphEdge edge : node.outputs()) {
                        if (edge.isStreaming() && edge.targetPartition() != null && !edge.targetPartition().equals(partition)) {
                            consumers.add(edge.targetPartition());
                        }
                    }
                }
            }
            streamConsumers.put(partition, Set.copyOf(consumers));
        });
    }

    ModelGraph graph() {
        return graph;
    }

    GraphWalk walk(String name) {
        return graph.walks().stream().filter(w -> w.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("model " + graph.modelName() + " has no walk " + name));
    }

    List<WorkerGraph> workerGraphsOfWalk(String walk) {
        return workerGraphs.stream().filter(wg -> wg.walk().equals(walk)).toList();
    }

    /** Worker graph ids of every walk of {@code partition}, ascending. */
    List<Integer> workerGraphIdsOfPartition(String partition) {
        List<String> walks = graph.partitions().get(partition);
        return workerGraphs.stream().filter(wg -> walks.contains(wg.walk())).map(WorkerGraph::id).sorted().toList();
    }

    /** The nodes of {@code walk} that take {@code signal} as input, in name order; empty when none does. */
    List<String> inputConsumers(String walk, String signal) {
        return inputConsumers.getOrDefault(walk, Map.of()).getOrDefault(signal, List.of());
    }

    /** The other partitions that {@code producer}'s walks feed through streaming edges, in name order. */
    Set<String> streamConsumersOf(String producer) {
        return streamConsumers.getOrDefault(producer, Set.of());
    }

    /**
     * Picks one instance (block of {@code tp_size} workers) per node group, round-robin per group over instances
     * whose workers are all {@code ready}, and answers every worker graph id to its workers (rank 0 first); null
     * when some group has no ready instance. Only a successful pick advances the round-robin positions.
     */
    Map<Integer, List<String>> place(Predicate<EntityId> ready) {
        return place(ready, true);
    }

    /** Whether {@link #place} would succeed now; moves nothing. */
    boolean placeable(Predicate<EntityId> ready) {
        return place(ready, false) != null;
    }

    private Map<Integer, List<String>> place(Predicate<EntityId> ready, boolean advance) {
        List<List<Integer>> picked = new ArrayList<>();
        int[] chosen = new int[nextInstance.length];
        for (int g = 0; g < config.nodeGroups().size(); g++) {
            NodeGroupConfig group = config.nodeGroups().get(g);
            int instances = group.workers().size() / group.tpSize();
            List<Integer> pick = null;
            for (int k = 0; k < instances && pick == null; k++) {
                int instance = (nextInstance[g] + k) % instances;
                List<Integer> block = group.workers().subList(instance * group.tpSize(), (instance + 1) * group.tpSize());
                if (block.stream().allMatch(w -> ready.test(EntityId.worker(w)))) {
                    pick = block;
                    chosen[g] = instance;
                }
            }
            if (pick == null) {
                return null;
            }
            picked.add(pick);
        }
        for (int g = 0; advance && g < chosen.length; g++) {
            int instances = config.nodeGroups().get(g).workers().size() / config.nodeGroups().get(g).tpSize();
            nextInstance[g] = (chosen[g] + 1) % instances;
        }
        Map<Integer, List<String>> placement = new TreeMap<>();
        for (WorkerGraph wg : workerGraphs) {
            placement.put(wg.id(), picked.get(wg.nodeGroupIndex()).stream().map(w -> EntityId.worker(w).value()).toList());
        }
        return placement;
    }
}
