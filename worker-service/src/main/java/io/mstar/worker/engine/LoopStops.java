package io.mstar.worker.engine;

import java.util.List;
import java.util.Map;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.wire.StopLoops;

/**
 * A peer's {@code StopLoops} for a disaggregated loop (docs/architecture.md#loops-and-streaming): applied once per loop
 * instance. A stop is new only if its position is strictly later ({@code label_context_gt}) than the last one applied
 * for that loop, and it ends only the loop instance it names: the running pass's if the positions agree, else the pass
 * that starts later at that position (the peer finished before this worker's piece began). Owned by the engine loop.
 */
final class LoopStops {

    private LoopStops() {
    }

    static void apply(PartitionState partition, StopLoops stop) {
        for (String loop : stop.loopNames()) {
            NestedLoopIndices at = stop.loopStopTimes().get(loop);
            NestedLoopIndices applied = partition.appliedStops.get(loop);
            if (applied != null && (at == null || !at.labelContextGt(applied, loop))) {
                continue; // this loop instance was stopped already, or the stop is older
            }
            if (at != null) {
                partition.appliedStops.put(loop, at);
            }
            PartitionPass pass = partition.pass;
            LoopState state = pass == null || pass.complete ? null : pass.loops.get(loop);
            if (state != null && (at == null || sameInstance(at, pass, loop))) {
                state.finishRequested = true; // the current iteration still completes
            }
        }
    }

    /** A new pass: a stop recorded for its loop instance before it started ends that loop after one iteration. */
    static void onPassStart(PartitionState partition, PartitionPass pass) {
        pass.loops.forEach((name, state) -> {
            NestedLoopIndices applied = partition.appliedStops.get(name);
            if (applied != null && sameInstance(applied, pass, name)) {
                state.finishRequested = true;
            }
        });
    }

    private static boolean sameInstance(NestedLoopIndices at, PartitionPass pass, String loop) {
        NestedLoopIndices here = new NestedLoopIndices(List.of(loop), Map.of(loop, 0), pass.info.fwdIndex());
        return !at.labelContextGt(here, loop) && !here.labelContextGt(at, loop);
    }
}
