package io.mstar.graph;

import java.util.List;
import java.util.Objects;

/**
 * A maximal piece of one walk that runs on one node group. The conductor maps {@code id} to the
 * workers of the replica it picked for the group ({@code worker_graph_to_workers}).
 *
 * @param id             unique across the whole deployment, deterministic (see {@link WorkerGraphSplit})
 * @param model          the model's catalog name
 * @param walk           the walk this is a piece of
 * @param nodeGroupIndex index into the model's {@code node_groups}
 * @param piece          the piece; a split loop appears as a loop with the original name, bounds and outputs
 * @param nodeNames      the piece's nodes in graph order
 */
public record WorkerGraph(int id, String model, String walk, int nodeGroupIndex, GraphSection piece,
        List<String> nodeNames) {

    public WorkerGraph {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(walk, "walk");
        Objects.requireNonNull(piece, "piece");
        nodeNames = List.copyOf(nodeNames);
    }
}
