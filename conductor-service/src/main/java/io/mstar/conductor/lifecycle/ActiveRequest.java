package io.mstar.conductor.lifecycle;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.model.ConductorPolicy;
import io.mstar.conductor.model.PolicyRequest;
import io.mstar.conductor.model.Step;
import io.mstar.conductor.output.Chunk;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.wire.RequestOutcome;
import reactor.core.publisher.Sinks;

/**
 * One request's mutable state. Owned by the lifecycle loop; only {@link RequestLifecycle} and its
 * {@link WalkDriver} and {@link OutputDelivery} touch it.
 */
final class ActiveRequest {

    final Submission submission;
    final ModelTopology topology;
    final ConductorPolicy policy;
    final Sinks.Many<Chunk> sink;
    final long baseSeed;
    final long submittedNanos;
    final Instant submittedAt;
    final long deadlineNanos;

    RequestState state = RequestState.QUEUED;
    RequestOutcome outcome;
    ErrorType errorType;
    AbortReason abortReason;
    String detail;
    long endedNanos;

    PolicyRequest policyRequest;
    Map<Integer, List<String>> placement = Map.of();
    final Map<String, PartitionRun> partitions = new LinkedHashMap<>();
    /** Worker-held uuid to how many times the conductor placed its descriptor into an edge. */
    final Map<Long, Integer> handOuts = new HashMap<>();

    // outputs
    final Map<String, List<PendingOutput>> pendingBySignal = new HashMap<>();
    int readsInFlight;
    int chunksDelivered;
    final ClientStreamWatch clientStream = new ClientStreamWatch();
    long lastChunkNanos;
    long arrivals;

    // drain
    final Set<String> awaitingReadsDone = new HashSet<>();
    long drainDeadlineNanos;

    ActiveRequest(Submission submission, ModelTopology topology, ConductorPolicy policy, Sinks.Many<Chunk> sink,
            long baseSeed, long submittedNanos, Instant submittedAt, long deadlineNanos) {
        this.submission = submission;
        this.topology = topology;
        this.policy = policy;
        this.sink = sink;
        this.baseSeed = baseSeed;
        this.submittedNanos = submittedNanos;
        this.submittedAt = submittedAt;
        this.deadlineNanos = deadlineNanos;
    }

    String id() {
        return submission.requestId();
    }

    /** Every worker that serves some worker graph of the request, in id order. */
    Set<String> workers() {
        Set<String> workers = new java.util.TreeSet<>();
        placement.values().forEach(workers::addAll);
        return workers;
    }

    boolean allPartitionsDone() {
        return partitions.values().stream().allMatch(p -> p.done);
    }

    boolean outputsSettled() {
        return readsInFlight == 0 && pendingBySignal.values().stream().allMatch(List::isEmpty);
    }

    RequestView view() {
        Map<String, Integer> tokens = new LinkedHashMap<>();
        Map<String, RequestView.PartitionProgress> progress = new LinkedHashMap<>();
        Map<String, Integer> waiting = new LinkedHashMap<>();
        pendingBySignal.forEach((signal, outputs) -> {
            if (!outputs.isEmpty()) {
                waiting.put(signal, outputs.size());
            }
        });
        partitions.forEach((name, run) -> {
            tokens.put(name, run.tokensProduced);
            progress.put(name, new RequestView.PartitionProgress(run.step == null ? null : run.step.walk(), run.passIndex,
                    run.done, run.reported.size()));
        });
        return new RequestView(id(), submission.model(), state, outcome, errorType == null ? null : errorType.value(),
                abortReason == null ? null : abortReason.value(), detail, submittedAt, tokens, chunksDelivered, progress,
                readsInFlight, waiting, clientStream.snapshot());
    }

    /** One partition's progress through its walks. */
    static final class PartitionRun {
        final String name;
        Step step;
        int passIndex;
        int tokensProduced;
        boolean done;
        /** (worker graph id, worker) pairs reported for the current pass. */
        final Set<String> reported = new HashSet<>();
        final Map<String, List<TensorPointerInfo>> persisted = new LinkedHashMap<>();
        final Map<String, Integer> newTokenCounts = new HashMap<>();
        boolean partitionDone;

        PartitionRun(String name, Step step) {
            this.name = name;
            this.step = step;
        }

        void startPass(Step next) {
            step = next;
            passIndex++;
            reported.clear();
            persisted.clear();
            newTokenCounts.clear();
            partitionDone = false;
        }
    }

    /** An emitted output: read or being read, waiting for its turn in its signal's loop order. */
    static final class PendingOutput {
        final String signal;
        final String modality;
        final NestedLoopIndices loopIndices;
        final long arrival;
        final Map<String, String> metadata;
        final List<TensorPointerInfo> tensors;
        final List<Object> data = new ArrayList<>();
        int readsLeft;

        PendingOutput(String signal, String modality, NestedLoopIndices loopIndices, long arrival,
                Map<String, String> metadata, List<TensorPointerInfo> tensors) {
            this.signal = signal;
            this.modality = modality;
            this.loopIndices = loopIndices;
            this.arrival = arrival;
            this.metadata = metadata;
            this.tensors = tensors;
            this.readsLeft = tensors.size();
            for (int i = 0; i < tensors.size(); i++) {
                data.add(null);
            }
        }
    }

    /** Forward-pass index first, then each loop outer to inner, then arrival. */
    static final Comparator<PendingOutput> LOOP_ORDER = (a, b) -> {
        if (a.loopIndices.wgFwdPassIdx() != b.loopIndices.wgFwdPassIdx()) {
            return Integer.compare(a.loopIndices.wgFwdPassIdx(), b.loopIndices.wgFwdPassIdx());
        }
        for (String loop : a.loopIndices.loopNameOrder()) {
            int x = a.loopIndices.loopIndices().getOrDefault(loop, 0);
            int y = b.loopIndices.loopIndices().getOrDefault(loop, 0);
            if (x != y) {
                return Integer.compare(x, y);
            }
        }
        return Long.compare(a.arrival, b.arrival);
    };
}
