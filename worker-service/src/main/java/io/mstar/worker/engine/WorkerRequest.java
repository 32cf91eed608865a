package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.mstar.graph.WorkerGraph;

/**
 * Everything a worker knows about one request: its placement, its partitions, its phase, and the sends the broker
 * has not acknowledged yet. Its tensors live in the store under its id. Owned by the engine loop.
 */
final class WorkerRequest {

    final String requestId;
    final String model;
    final Map<Integer, List<String>> workerGraphToWorkers;
    final Map<String, PartitionState> partitions = new LinkedHashMap<>();
    RequestPhase phase = RequestPhase.ACTIVE;
    /** Why it will leave this worker, once known (the first cause stays); null while it runs. */
    RequestEnd end;
    /** InputSignals and ResultTensors sent since the last WorkerGraphsDone was scheduled. */
    List<CompletableFuture<?>> unackedSends = new ArrayList<>();
    /** The last WorkerGraphsDone's send: the next one waits for it, so they leave in pass order. */
    CompletableFuture<?> lastReport = CompletableFuture.completedFuture(null);
    /** Reads started and not yet landed. */
    int readsInFlight;
    boolean readsDoneOwed;

    WorkerRequest(String requestId, String model, Map<Integer, List<String>> workerGraphToWorkers) {
        this.requestId = requestId;
        this.model = model;
        this.workerGraphToWorkers = Map.copyOf(workerGraphToWorkers);
    }

    void move(RequestPhase.Event event) {
        phase = phase.on(event);
    }

    /** No pass running and no signals waiting in any partition: nothing left to do here unless more arrives. */
    boolean idle() {
        return partitions.values().stream().allMatch(p -> p.idle() && p.pending.isEmpty());
    }

    /**
     * The workers of the worker graph of {@code pass} that runs {@code node}, rank 0 first: more than one for a node of
     * a tensor-parallel group (docs/tensor-parallelism.md); empty when no graph of the pass runs it.
     */
    List<String> workersOf(PartitionPass pass, String node) {
        for (WorkerGraph graph : pass.graphs) {
            if (graph.nodeNames().contains(node)) {
                return workerGraphToWorkers.getOrDefault(graph.id(), List.of());
            }
        }
        return List.of();
    }

    boolean schedulable() {
        return phase == RequestPhase.ACTIVE;
    }
}
