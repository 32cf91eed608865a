package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerGraphsDone;

/**
 * A pass's {@code WorkerGraphsDone} and its send gate (docs/request-flow.md): a report leaves only once the broker
 * acknowledged every send of the request so far (its outputs, signals to peers) and the request's previous report, so
 * the conductor never hears of a pass before what it produced, and reports leave in pass order. A send the broker
 * refused fails the request: nothing else would tell the conductor. Owned by the engine loop; acknowledgements come
 * back through {@code toLoop}.
 */
final class PassReports {

    private final OwnerThread owner;
    private final EntityId self;
    private final Outbox outbox;
    private final Consumer<Runnable> toLoop;
    private final Predicate<WorkerRequest> live;
    private final RequestFailures failure;

    PassReports(OwnerThread owner, EntityId self, Outbox outbox, Consumer<Runnable> toLoop, Predicate<WorkerRequest> live,
            RequestFailures failure) {
        this.owner = owner;
        this.self = self;
        this.outbox = outbox;
        this.toLoop = toLoop;
        this.live = live;
        this.failure = failure;
    }

    void report(WorkerRequest request, PartitionState partition, PartitionPass pass) {
        owner.check();
        List<String> firstWorkers = request.workerGraphToWorkers.getOrDefault(pass.graphs.get(0).id(), List.of());
        Map<String, Integer> consumed = new LinkedHashMap<>();
        partition.streams.forEach((name, stream) -> consumed.put(name, Math.toIntExact(stream.buffer.tokensConsumed())));
        WorkerGraphsDone done = WorkerGraphsDone.builder(request.requestId, pass.graphIds(),
                        !firstWorkers.isEmpty() && firstWorkers.get(0).equals(self.value()))
                .persistSignals(pass.persistSignals)
                .newTokenCounts(pass.newTokenCounts)
                .outputSignalNames(List.copyOf(pass.outputSignalNames))
                .partitionName(partition.name)
                .partitionDone(pass.finalStreamChunk)
                .streamTokensConsumed(consumed)
                .outputLoopIndices(pass.outputLoopIndices)
                .graphTimings(pass.timings())
                .build();
        List<CompletableFuture<?>> gate = new ArrayList<>(request.unackedSends);
        gate.add(request.lastReport);
        request.unackedSends = new ArrayList<>();
        CompletableFuture<Object> sent = new CompletableFuture<>();
        request.lastReport = sent;
        CompletableFuture.allOf(gate.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> toLoop.accept(() -> {
            if (!live.test(request) || !request.schedulable()) {
                sent.complete(null);
                return;
            }
            if (error != null) {
                failure.fail(request, WorkerErrorType.MESSAGE_NOT_DELIVERED,
                        "a send was not acknowledged by the broker: " + error);
                sent.complete(null);
                return;
            }
            // Signals already pending started the next pass: nothing waited on this report.
            partition.reportSentNanos = partition.idle() ? System.nanoTime() : 0;
            outbox.toConductor(ConductorMessage.of(done)).whenComplete((r, e) -> {
                if (e != null) {
                    // Nothing else would tell the conductor this pass ended: the request would wait for its deadline.
                    toLoop.accept(() -> failure.fail(request, WorkerErrorType.MESSAGE_NOT_DELIVERED,
                            "the report of a pass was not acknowledged by the broker: " + e));
                }
                sent.complete(null);
            });
        }));
    }
}
