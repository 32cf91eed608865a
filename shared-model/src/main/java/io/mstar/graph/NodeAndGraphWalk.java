package io.mstar.graph;

import java.util.Comparator;
import java.util.Objects;

/**
 * A node as run in one graph walk: the same node name in two walks is the same engine but is
 * timed separately. Ordered by node, then walk (the wire order of {@code graph_timings}).
 */
public record NodeAndGraphWalk(String node, String graphWalk) implements Comparable<NodeAndGraphWalk> {

    private static final Comparator<NodeAndGraphWalk> ORDER =
            Comparator.comparing(NodeAndGraphWalk::node).thenComparing(NodeAndGraphWalk::graphWalk);

    public NodeAndGraphWalk {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(graphWalk, "graph_walk");
    }

    @Override
    public int compareTo(NodeAndGraphWalk other) {
        return ORDER.compare(this, other);
    }
}
