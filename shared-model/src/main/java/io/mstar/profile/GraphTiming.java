package io.mstar.profile;

import io.mstar.graph.NodeAndGraphWalk;

import java.util.Objects;

/**
 * Accumulated execution time of one node in one graph walk for a request. Times are seconds.
 *
 * @param node             the node
 * @param graphWalk        the walk it ran in
 * @param execCount        forward passes accumulated
 * @param totalTime        wall time from scheduling to done
 * @param forwardTime      from forward start to the end of postprocess
 * @param preprocessTime   preprocess plus input preparation
 * @param postprocessTime  CPU-side postprocess, minus what overlapped asynchronously
 */
public record GraphTiming(
        String node,
        String graphWalk,
        long execCount,
        double totalTime,
        double forwardTime,
        double preprocessTime,
        double postprocessTime) {

    public GraphTiming {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(graphWalk, "graph_walk");
    }

    /** The key this timing is filed under in {@code WorkerGraphsDone.graph_timings}. */
    public NodeAndGraphWalk key() {
        return new NodeAndGraphWalk(node, graphWalk);
    }
}
