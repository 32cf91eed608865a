package io.mstar.graph;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A named standalone graph ({@code prefill}, {@code decode}, {@code codec_chunk}). Validated on
 * construction: node and loop names are unique within the walk, and every edge goes to a node of
 * the walk or to a special destination (a streaming edge into another partition: to a node of that
 * partition, checked by {@link ModelGraph}).
 *
 * @param name the walk name, non-empty
 * @param root the walk's graph
 */
public record GraphWalk(String name, GraphSection root) {

    public GraphWalk {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(root, "root");
        if (name.isEmpty()) {
            throw new GraphModelException("walk ''", "a walk needs a name");
        }
        validate(name, root);
    }

    private static void validate(String walk, GraphSection root) {
        List<GraphNode> nodes = new ArrayList<>();
        List<Loop> loops = new ArrayList<>();
        collect(root, nodes, loops);
        Set<String> names = new HashSet<>();
        for (GraphNode node : nodes) {
            if (!names.add(node.name())) {
                throw new GraphModelException("node '" + node.name() + "'", "appears more than once in walk '" + walk + "'");
            }
        }
        Set<String> loopNames = new HashSet<>();
        for (Loop loop : loops) {
            if (!loopNames.add(loop.name())) {
                throw new GraphModelException("loop '" + loop.name() + "'", "appears more than once in walk '" + walk + "'");
            }
        }
        for (GraphNode node : nodes) {
            for (GraphEdge edge : node.outputs()) {
                checkDestination(walk, names, "node '" + node.name() + "'", edge);
            }
        }
        for (Loop loop : loops) {
            for (GraphEdge edge : loop.outputs()) {
                checkDestination(walk, names, "loop '" + loop.name() + "'", edge);
            }
            for (GraphEdge edge : loop.accumulatedOutputs()) {
                checkDestination(walk, names, "loop '" + loop.name() + "'", edge);
            }
        }
    }

    private static void checkDestination(String walk, Set<String> names, String owner, GraphEdge edge) {
        if (crossesPartitions(edge)) {
            return;
        }
        if (!names.contains(edge.nextNode()) && !SpecialDestinations.isSpecial(edge.nextNode())) {
            throw new GraphModelException(owner + " edge '" + edge.name() + "'",
                    "next_node '" + edge.nextNode() + "' is neither a node of walk '" + walk + "' nor a special destination");
        }
    }

    /**
     * A streaming edge into another partition names a node of that partition's walks, not of this
     * walk; {@link ModelGraph} checks it against the whole model.
     */
    static boolean crossesPartitions(GraphEdge edge) {
        return edge.isStreaming() && edge.targetPartition() != null;
    }

    // Walks the tree itself rather than using nodes(): a map would hide the duplicates we look for.
    private static void collect(GraphSection section, List<GraphNode> nodes, List<Loop> loops) {
        if (section instanceof GraphNode node) {
            nodes.add(node);
        } else if (section instanceof Sequential seq) {
            seq.sections().forEach(s -> collect(s, nodes, loops));
        } else if (section instanceof Parallel par) {
            par.sections().forEach(s -> collect(s, nodes, loops));
        } else if (section instanceof Loop loop) {
            loops.add(loop);
            collect(loop.section(), nodes, loops);
        }
    }
}
