package io.mstar.graph;

import java.util.List;
import java.util.Set;

/** Terse builders for test graphs. */
final class Graphs {

    private Graphs() {
    }

    static GraphEdge edge(String name, String to) {
        return new GraphEdge(to, name, List.of());
    }

    static GraphNode node(String name, List<String> inputs, GraphEdge... outputs) {
        return new GraphNode(name, Set.copyOf(inputs), List.of(outputs), false);
    }

    static Sequential seq(GraphSection... sections) {
        return new Sequential(List.of(sections));
    }

    static Parallel par(GraphSection... sections) {
        return new Parallel(List.of(sections));
    }

    static Loop loop(String name, int maxIters, GraphSection body, GraphEdge... outputs) {
        return new Loop(body, maxIters, List.of(outputs), List.of(), name);
    }

    static NameAndDestination in(String name, String dest) {
        return new NameAndDestination(name, dest);
    }
}
