package io.mstar.graph;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A body run at most {@code maxIters} times; an engine's finish signal ends it after the current
 * iteration. A loop split across node groups becomes one loop per piece with the same name,
 * bounds and outputs (a disaggregated loop, kept consistent by {@code StopLoops}), which is why
 * the name is explicit rather than generated.
 *
 * @param section            the body
 * @param maxIters           upper bound on iterations, at least 1
 * @param outputs            edges leaving the loop, carrying the last iteration's tensors
 * @param accumulatedOutputs edges leaving the loop, carrying one entry per iteration
 * @param name               unique within a walk; labels {@code NestedLoopIndices} and {@code StopLoops}
 */
public record Loop(GraphSection section, int maxIters, List<GraphEdge> outputs, List<GraphEdge> accumulatedOutputs,
        String name) implements GraphSection {

    public Loop {
        Objects.requireNonNull(section, "section");
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new GraphModelException("loop ''", "a loop needs a name");
        }
        if (maxIters < 1) {
            throw new GraphModelException("loop '" + name + "'", "max_iters must be at least 1, was " + maxIters);
        }
        outputs = List.copyOf(outputs);
        accumulatedOutputs = List.copyOf(accumulatedOutputs);
    }

    @Override
    public Map<String, GraphNode> nodes() {
        return section.nodes();
    }

    @Override
    public Map<String, Loop> loops() {
        Map<String, Loop> loops = new LinkedHashMap<>();
        loops.put(name, this);
        loops.putAll(section.loops());
        return Collections.unmodifiableMap(loops);
    }

    /**
     * The body's inputs and loop-backs; the body's own external outputs are replaced by the loop's
     * declared outputs, because only those leave the loop (after its last iteration).
     */
    @Override
    public SectionInputsOutputs inputsOutputs() {
        SectionInputsOutputs body = section.inputsOutputs();
        List<GraphEdge> leaving = new ArrayList<>(outputs);
        leaving.addAll(accumulatedOutputs);
        return new SectionInputsOutputs(body.externalInputs(), leaving, body.loopBack());
    }
}
