package io.mstar.graph;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One engine in the graph. The same name in several walks is the same engine and state on a
 * worker.
 *
 * @param name           unique within a walk, never empty
 * @param inputNames     signal names the node waits for
 * @param outputs        declared output edges; an edge to the node itself is a loop-back
 * @param consumesStream reads a streaming partition's chunks rather than whole signals
 */
public record GraphNode(String name, Set<String> inputNames, List<GraphEdge> outputs, boolean consumesStream)
        implements GraphSection {

    public GraphNode {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || SpecialDestinations.isSpecial(name)) {
            throw new GraphModelException("node '" + name + "'", "a node name must be non-empty and not a special destination");
        }
        inputNames = Set.copyOf(inputNames);
        outputs = List.copyOf(outputs);
    }

    @Override
    public Map<String, GraphNode> nodes() {
        return Map.of(name, this);
    }

    @Override
    public Map<String, Loop> loops() {
        return Map.of();
    }

    @Override
    public SectionInputsOutputs inputsOutputs() {
        Set<NameAndDestination> loopBack = new HashSet<>();
        for (GraphEdge edge : outputs) {
            if (edge.nextNode().equals(name)) {
                loopBack.add(NameAndDestination.of(edge));
            }
        }
        Set<NameAndDestination> inputs = new HashSet<>();
        for (String input : inputNames) {
            NameAndDestination pair = new NameAndDestination(input, name);
            if (!loopBack.contains(pair)) {
                inputs.add(pair);
            }
        }
        List<GraphEdge> external = outputs.stream().filter(e -> !e.nextNode().equals(name)).toList();
        return new SectionInputsOutputs(inputs, external, loopBack);
    }
}
