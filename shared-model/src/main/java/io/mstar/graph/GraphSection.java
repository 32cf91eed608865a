package io.mstar.graph;

import java.util.Map;

/**
 * A static piece of a model's dataflow graph: a node, or a composition of sections. Immutable;
 * holds no per-request state (that lives in the worker's engine, not here).
 */
public sealed interface GraphSection permits GraphNode, Sequential, Parallel, Loop {

    /** Every node in the section by name, in graph order (depth first, declared order). */
    Map<String, GraphNode> nodes();

    /** Every loop in the section by name, outer before inner. */
    Map<String, Loop> loops();

    /** What crosses this section's boundary. */
    SectionInputsOutputs inputsOutputs();
}
