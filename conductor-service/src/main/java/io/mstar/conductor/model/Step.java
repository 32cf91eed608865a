package io.mstar.conductor.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.mstar.graph.TensorPointerInfo;

/**
 * One walk a partition runs next, as a policy decides it.
 *
 * @param walk                  the walk
 * @param inputs                signal name to the descriptors the walk consumes; the conductor turns each signal into
 *                              one edge per consuming node of the walk (and counts each placement as a hand-out).
 *                              Empty for a walk started by a stream buffer rather than by the conductor.
 * @param stepMetadata          engine hints for the pass ({@code step_metadata})
 * @param dynamicLoopIterCounts loop name to iterations to run this pass ({@code dynamic_loop_iter_counts})
 */
public record Step(String walk, Map<String, List<TensorPointerInfo>> inputs, Map<String, String> stepMetadata,
        Map<String, Integer> dynamicLoopIterCounts) {

    public Step {
        Objects.requireNonNull(walk, "walk");
        inputs = Map.copyOf(inputs);
        stepMetadata = Map.copyOf(stepMetadata);
        dynamicLoopIterCounts = Map.copyOf(dynamicLoopIterCounts);
    }
}
