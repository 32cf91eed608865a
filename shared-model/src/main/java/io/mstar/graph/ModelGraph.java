package io.mstar.graph;

import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A model's static graph: its walks in declared order (the order worker-graph ids follow) and
 * its partitions, sets of walks that advance independently of the request's other partitions.
 *
 * @param modelName  the catalog name, as in the deployment config
 * @param walks      in declared order, names unique
 * @param partitions partition name to walk names; when empty, one partition {@value #DEFAULT_PARTITION}
 *                   holding every walk
 */
public record ModelGraph(String modelName, List<GraphWalk> walks, Map<String, List<String>> partitions) {

    /** The partition name used when a model declares none. */
    public static final String DEFAULT_PARTITION = "default";

    public ModelGraph {
        Objects.requireNonNull(modelName, "modelName");
        walks = List.copyOf(walks);
        if (walks.isEmpty()) {
            throw new GraphModelException("model '" + modelName + "'", "needs at least one walk");
        }
        Set<String> walkNames = new HashSet<>();
        for (GraphWalk walk : walks) {
            if (!walkNames.add(walk.name())) {
                throw new GraphModelException("walk '" + walk.name() + "'", "declared twice in model '" + modelName + "'");
            }
        }
        if (partitions == null || partitions.isEmpty()) {
            partitions = Map.of(DEFAULT_PARTITION, walks.stream().map(GraphWalk::name).toList());
        } else {
            Map<String, List<String>> copy = new LinkedHashMap<>();
            Set<String> assigned = new HashSet<>();
            partitions.forEach((partition, names) -> {
                for (String walk : names) {
                    if (!walkNames.contains(walk)) {
                        throw new GraphModelException("partition '" + partition + "'", "names unknown walk '" + walk + "'");
                    }
                    if (!assigned.add(walk)) {
                        throw new GraphModelException("walk '" + walk + "'", "is in more than one partition");
                    }
                }
                copy.put(partition, List.copyOf(names));
            });
            partitions = Collections.unmodifiableMap(copy);
        }
        checkStreamingTargets(modelName, walks, partitions);
    }

    private static void checkStreamingTargets(String model, List<GraphWalk> walks, Map<String, List<String>> partitions) {
        for (GraphWalk walk : walks) {
            for (GraphNode node : walk.root().nodes().values()) {
                for (GraphEdge edge : node.outputs()) {
                    if (!GraphWalk.crossesPartitions(edge)) {
                        continue;
                    }
                    String where = "node '" + node.name() + "' edge '" + edge.name() + "'";
                    List<String> targetWalks = partitions.get(edge.targetPartition());
                    if (targetWalks == null) {
                        throw new GraphModelException(where, "target_partition '" + edge.targetPartition()
                                + "' is not a partition of model '" + model + "'");
                    }
                    boolean found = walks.stream().filter(w -> targetWalks.contains(w.name()))
                            .anyMatch(w -> w.root().nodes().containsKey(edge.nextNode()));
                    if (!found) {
                        throw new GraphModelException(where, "next_node '" + edge.nextNode()
                                + "' is not a node of partition '" + edge.targetPartition() + "'");
                    }
                }
            }
        }
    }

    /** A model with one partition, {@value #DEFAULT_PARTITION}. */
    public ModelGraph(String modelName, List<GraphWalk> walks) {
        this(modelName, walks, Map.of());
    }
}
