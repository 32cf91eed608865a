package io.mstar.worker.engine;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.InputSignals;

/**
 * One partition of a request on this worker: its current forward-pass info, the pass running now (one walk at a
 * time), signals for a later pass that arrived early, and its stream buffers when it consumes a streaming edge.
 * Owned by the engine loop.
 */
final class PartitionState {

    final String name;
    final List<Integer> workerGraphIds;
    CurrentForwardPassInfo info;
    /** The pass running now, or null between passes. */
    PartitionPass pass;
    /** Signals for the next pass, received while this one still runs. */
    final Deque<InputSignals> pending = new ArrayDeque<>();
    /** Streaming edge name to its buffer. */
    final Map<String, ConsumedStream> streams = new LinkedHashMap<>();
    /** Last StopLoops applied per loop. */
    final Map<String, NestedLoopIndices> appliedStops = new LinkedHashMap<>();
    /** When this partition's last WorkerGraphsDone went out while it was idle; 0 once the next pass started. */
    long reportSentNanos;

    PartitionState(String name, List<Integer> workerGraphIds, CurrentForwardPassInfo info) {
        this.name = name;
        this.workerGraphIds = List.copyOf(workerGraphIds);
        this.info = info;
    }

    boolean idle() {
        return pass == null || pass.complete;
    }
}
