package io.mstar.graph;

import java.util.List;
import java.util.Set;

/**
 * What crosses a section's boundary. Computed once at construction time of a model; a loop uses
 * {@code externalInputs} to re-inject its inputs on each iteration and {@code loopBack} to know
 * which body outputs feed the body's next iteration rather than leave it.
 *
 * @param externalInputs  inputs consumed inside but not produced inside
 * @param externalOutputs edges leaving the section, in graph order
 * @param loopBack        signals produced by the section for one of its own earlier nodes
 */
public record SectionInputsOutputs(Set<NameAndDestination> externalInputs, List<GraphEdge> externalOutputs,
        Set<NameAndDestination> loopBack) {

    public SectionInputsOutputs {
        externalInputs = Set.copyOf(externalInputs);
        externalOutputs = List.copyOf(externalOutputs);
        loopBack = Set.copyOf(loopBack);
    }
}
