package io.mstar.graph;

import java.util.Objects;

/**
 * A signal name paired with the node that consumes it. Inputs are matched to producing edges
 * by this pair, not by name alone, because the same signal name may feed several nodes.
 */
public record NameAndDestination(String name, String destination) {

    public NameAndDestination {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(destination, "destination");
    }

    static NameAndDestination of(GraphEdge edge) {
        return new NameAndDestination(edge.name(), edge.nextNode());
    }
}
