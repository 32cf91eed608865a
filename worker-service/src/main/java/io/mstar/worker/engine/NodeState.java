package io.mstar.worker.engine;

import java.util.HashMap;
import java.util.Map;

import io.mstar.graph.GraphNode;

/**
 * One node of a pass: its input slots for this iteration and, inside a loop, the loop-backs already produced for
 * the next one. A slot holds the local uuid of a tensor this node holds one reference to. Owned by the engine loop.
 */
final class NodeState {

    final GraphNode node;
    /** The innermost loop around the node in this pass, or null. */
    final LoopState loop;
    final Map<String, Long> current = new HashMap<>();
    final Map<String, Long> next = new HashMap<>();
    /** Ran in the current iteration (or, outside loops, in this pass). */
    boolean ran;
    /** In the scheduler's ready set or in the running batch. */
    boolean queued;
    /** This pass's runs of the node and their seconds: its {@code GraphTiming}. */
    long execCount;
    double execSeconds;

    NodeState(GraphNode node, LoopState loop) {
        this.node = node;
        this.loop = loop;
    }

    void timed(double seconds) {
        execCount++;
        execSeconds += seconds;
    }

    boolean ready() {
        return !ran && !queued && (loop == null || !loop.done) && current.keySet().containsAll(node.inputNames());
    }
}
