package io.mstar.deployment;

import java.util.List;

/**
 * A set of graph nodes placed together on the same workers ({@code node_groups[]} in the YAML).
 *
 * @param nodeNames the graph nodes this group runs ({@code node_names}), never empty
 * @param workers worker ordinals in declared order ({@code workers}); consecutive blocks of {@code tpSize}
 *     form one instance, so {@code [0, 1]} with tp 1 is two data-parallel replicas
 * @param tpSize tensor-parallel degree ({@code tp_size}, default 1)
 * @param graphWalks optional walk filter ({@code graph_walks}); empty means every walk of the model
 */
public record NodeGroupConfig(List<String> nodeNames, List<Integer> workers, int tpSize, List<String> graphWalks) {

    public NodeGroupConfig {
        nodeNames = List.copyOf(nodeNames);
        workers = List.copyOf(workers);
        graphWalks = List.copyOf(graphWalks);
    }
}
