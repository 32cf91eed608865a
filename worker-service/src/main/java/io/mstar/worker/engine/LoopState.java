package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.graph.Loop;
import io.mstar.graph.NameAndDestination;

/**
 * One loop of a pass (docs/architecture.md#loops-and-streaming): how many iterations it runs, whether a finish signal
 * or a {@code StopLoops} ended it, and the tensors it keeps across iterations — external inputs to re-ingest, the last
 * iteration's loop outputs, the accumulated outputs. Every kept tensor holds one reference. Owned by the engine loop.
 */
final class LoopState {

    final Loop loop;
    final int iterations;
    final Set<String> bodyNodes;
    final Set<NameAndDestination> loopBack;
    final Set<NameAndDestination> externalInputs;
    /** External inputs as they first arrived, re-ingested at each iteration. */
    final Map<NameAndDestination, Long> retained = new HashMap<>();
    /** Loop-output edge name to this iteration's tensor. */
    final Map<String, Long> lastOutputs = new HashMap<>();
    /** Accumulated-output edge name to one tensor per iteration. */
    final Map<String, List<Long>> accumulated = new HashMap<>();
    int iteration;
    boolean finishRequested;
    /** Ended by a local finish signal (rather than count or a peer's StopLoops): peers must be told. */
    boolean finishedLocally;
    boolean done;

    LoopState(Loop loop, int iterations) {
        this.loop = loop;
        this.iterations = iterations;
        this.bodyNodes = new LinkedHashSet<>(loop.section().nodes().keySet());
        this.loopBack = loop.section().inputsOutputs().loopBack();
        this.externalInputs = loop.section().inputsOutputs().externalInputs();
    }

    boolean isLoopOutput(String edgeName) {
        return loop.outputs().stream().anyMatch(e -> e.name().equals(edgeName));
    }

    boolean isAccumulated(String edgeName) {
        return loop.accumulatedOutputs().stream().anyMatch(e -> e.name().equals(edgeName));
    }

    void accumulate(String edgeName, long uuid) {
        accumulated.computeIfAbsent(edgeName, n -> new ArrayList<>()).add(uuid);
    }
}
