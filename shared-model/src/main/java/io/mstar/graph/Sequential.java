package io.mstar.graph;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Sections that run one after another, each feeding later ones. */
public record Sequential(List<GraphSection> sections) implements GraphSection {

    public Sequential {
        sections = List.copyOf(sections);
        if (sections.isEmpty()) {
            throw new GraphModelException("Sequential", "needs at least one section");
        }
    }

    @Override
    public Map<String, GraphNode> nodes() {
        return Sections.nodes(sections);
    }

    @Override
    public Map<String, Loop> loops() {
        return Sections.loops(sections);
    }

    /**
     * An output matched by a later section's input is internal; an output addressed to an earlier
     * section's node is a loop-back (it can only be consumed on the next iteration of an enclosing
     * loop), so it is neither an external output nor satisfies an external input.
     */
    @Override
    public SectionInputsOutputs inputsOutputs() {
        Set<String> nodesSoFar = new HashSet<>();
        List<GraphEdge> outputs = new ArrayList<>();
        Set<NameAndDestination> inputs = new HashSet<>();
        Set<NameAndDestination> loopBack = new HashSet<>();
        Set<NameAndDestination> internal = new HashSet<>();
        for (GraphSection section : sections) {
            SectionInputsOutputs io = section.inputsOutputs();
            loopBack.addAll(io.loopBack());
            inputs.addAll(io.externalInputs());
            outputs.addAll(io.externalOutputs());
            for (GraphEdge edge : outputs) {
                if (inputs.contains(NameAndDestination.of(edge))) {
                    internal.add(NameAndDestination.of(edge));
                }
            }
            for (GraphEdge edge : io.externalOutputs()) {
                if (nodesSoFar.contains(edge.nextNode())) {
                    loopBack.add(NameAndDestination.of(edge));
                }
            }
            outputs.removeIf(e -> internal.contains(NameAndDestination.of(e)) || loopBack.contains(NameAndDestination.of(e)));
            inputs.removeAll(internal);
            inputs.removeAll(loopBack);
            nodesSoFar.addAll(section.nodes().keySet());
        }
        return new SectionInputsOutputs(inputs, outputs, loopBack);
    }
}
