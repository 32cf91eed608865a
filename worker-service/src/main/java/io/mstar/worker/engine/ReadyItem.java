package io.mstar.worker.engine;

import java.util.LinkedHashSet;
import java.util.Set;

import io.mstar.graph.NameAndDestination;

/** A node of one request's pass whose inputs are all there. */
record ReadyItem(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node) {

    /**
     * The loop-back inputs this node's next iteration takes from iteration {@code iteration}, or null when that next
     * iteration may not be speculated: the request no longer runs, its loop ends or was asked to stop, the loop has
     * more than this node, or an input is neither a loop-back nor retained.
     */
    Set<String> nextIterationLoopBacks(int iteration) {
        NodeState node = node();
        LoopState loop = node.loop;
        if (!request().schedulable() || loop == null || loop.done || loop.finishRequested
                || loop.bodyNodes.size() != 1 || loop.iteration != iteration || iteration + 1 >= loop.iterations
                || partition().pass != pass() || pass().complete) {
            return null;
        }
        Set<String> loopBacks = new LinkedHashSet<>();
        for (String input : node.node.inputNames()) {
            NameAndDestination edge = new NameAndDestination(input, node.node.name());
            if (loop.loopBack.contains(edge)) {
                loopBacks.add(input);
            } else if (!loop.retained.containsKey(edge)) {
                return null;
            }
        }
        return loopBacks.isEmpty() ? null : loopBacks;
    }
}
