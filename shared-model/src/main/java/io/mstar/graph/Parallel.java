package io.mstar.graph;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Sections with no order between them; each may start once its own inputs are ready. */
public record Parallel(List<GraphSection> sections) implements GraphSection {

    public Parallel {
        sections = List.copyOf(sections);
        if (sections.isEmpty()) {
            throw new GraphModelException("Parallel", "needs at least one section");
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
     * A signal is internal only when a member produces it and a member consumes it, matched by
     * (name, destination); a member input fed from outside stays external even though its
     * destination is a member node.
     */
    @Override
    public SectionInputsOutputs inputsOutputs() {
        List<SectionInputsOutputs> ios = sections.stream().map(GraphSection::inputsOutputs).toList();
        Set<NameAndDestination> produced = new HashSet<>();
        Set<NameAndDestination> consumed = new HashSet<>();
        for (SectionInputsOutputs io : ios) {
            io.externalOutputs().forEach(e -> produced.add(NameAndDestination.of(e)));
            consumed.addAll(io.externalInputs());
        }
        Set<NameAndDestination> internal = new HashSet<>(produced);
        internal.retainAll(consumed);
        Set<NameAndDestination> inputs = new HashSet<>();
        Set<NameAndDestination> loopBack = new HashSet<>();
        List<GraphEdge> outputs = new ArrayList<>();
        for (SectionInputsOutputs io : ios) {
            loopBack.addAll(io.loopBack());
            io.externalInputs().stream().filter(p -> !internal.contains(p)).forEach(inputs::add);
            io.externalOutputs().stream().filter(e -> !internal.contains(NameAndDestination.of(e))).forEach(outputs::add);
        }
        return new SectionInputsOutputs(inputs, outputs, loopBack);
    }
}
