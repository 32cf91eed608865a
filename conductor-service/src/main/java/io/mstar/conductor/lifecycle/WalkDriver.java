package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.model.PassResult;
import io.mstar.conductor.model.Step;
import io.mstar.conductor.model.Transition;
import io.mstar.conductor.tensors.ConductorTensors;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageBody;

/**
 * Drives a running request's walks pass by pass (docs/request-flow.md): sends each partition's first pass when the
 * request is admitted, counts a pass's {@link WorkerGraphsDone} reports until every worker of its walk has reported,
 * asks the policy for the next step, and sends the next pass's {@link InputSignals}, the producers'
 * {@link UnpersistTensors} and, when a partition is done, the end of its streams to the partitions they feed.
 * {@link PassRouting} works out where a pass's inputs go; this class sends them.
 *
 * <p>Owned by the lifecycle loop, like the {@link RequestLifecycle} that calls it with running requests; a pass that
 * fails or ends the request goes to the {@link RequestCallbacks}.
 */
final class WalkDriver {

    // The category the lifecycle logged under before walks had their own class; log filters on it keep matching.
    private static final Logger log = LoggerFactory.getLogger(RequestLifecycle.class);

    private final WorkerOutbox outbox;
    private final ConductorTensors tensors;
    private final RequestMeters meters;
    private final Consumer<Runnable> toLoop;
    private final RequestCallbacks requests;

    WalkDriver(WorkerOutbox outbox, ConductorTensors tensors, RequestMeters meters, Consumer<Runnable> toLoop,
            RequestCallbacks requests) {
        this.outbox = outbox;
        this.tensors = tensors;
        this.meters = meters;
        this.toLoop = toLoop;
        this.requests = requests;
    }

    /** Sends every partition's first pass of a request just admitted on {@code request.placement}. */
    void start(ActiveRequest request) {
        try {
            for (String partition : request.topology.graph().partitions().keySet()) {
                Step first = request.policy.initial(partition, request.policyRequest);
                ActiveRequest.PartitionRun run = new ActiveRequest.PartitionRun(partition, first);
                request.partitions.put(partition, run);
                Map<String, List<GraphEdge>> shares = PassRouting.route(request, first);
                CurrentForwardPassInfo info = PassRouting.passInfo(request, run);
                List<Integer> partitionWgs = request.topology.workerGraphIdsOfPartition(partition);
                Set<String> partitionWorkers = new TreeSet<>();
                for (int wg : partitionWgs) {
                    partitionWorkers.addAll(request.placement.get(wg));
                }
                for (String worker : partitionWorkers) {
                    List<GraphEdge> share = shares.getOrDefault(worker, List.of());
                    send(request, worker, new NewRequest(request.id(), partitionWgs, request.placement, share, info,
                            tensors.inlineData(share)));
                }
            }
        } catch (ConductorException e) {
            requests.fail(request, e.type(), e.getMessage());
        }
    }

    /**
     * A report of a running request's pass from {@code sender}, which arrived at {@code arrivedNanos}: the pass is
     * done when every worker of its walk has reported; a duplicate, a foreign one or one for a done partition is
     * ignored.
     */
    void onWorkerGraphsDone(ActiveRequest request, WorkerGraphsDone done, EntityId sender, long arrivedNanos) {
        ActiveRequest.PartitionRun run = request.partitions.get(done.partitionName());
        if (run == null || run.done) {
            log.debug("WorkerGraphsDone for {} partition {} of {} ignored", run == null ? "unknown" : "done",
                    done.partitionName(), done.requestId());
            return;
        }
        Set<Integer> walkWgs = new TreeSet<>();
        request.topology.workerGraphsOfWalk(run.step.walk()).forEach(wg -> walkWgs.add(wg.id()));
        boolean fresh = false;
        for (int wg : done.workerGraphIds()) {
            if (walkWgs.contains(wg) && request.placement.get(wg).contains(sender.value())) {
                fresh |= run.reported.add(wg + "@" + sender.value());
            }
        }
        if (!fresh) {
            log.debug("duplicate or foreign WorkerGraphsDone {} from {} for {} ignored", done.workerGraphIds(), sender,
                    done.requestId());
            return;
        }
        done.persistSignals().forEach((signal, descriptors) -> {
            List<TensorPointerInfo> acc = run.persisted.computeIfAbsent(signal, s -> new ArrayList<>());
            for (TensorPointerInfo d : descriptors) {
                if (acc.stream().noneMatch(x -> x.uuid() == d.uuid())) {
                    acc.add(d);
                }
            }
        });
        if (done.isFirstTpRank()) {
            done.newTokenCounts().forEach((signal, n) -> run.newTokenCounts.merge(signal, n, Integer::sum));
        }
        run.partitionDone |= done.partitionDone();
        int expected = 0;
        for (int wg : walkWgs) {
            expected += request.placement.get(wg).size();
        }
        if (run.reported.size() < expected) {
            return;
        }
        passDone(request, run, arrivedNanos);
    }

    private void passDone(ActiveRequest request, ActiveRequest.PartitionRun run, long arrivedNanos) {
        int tokensThisPass = run.newTokenCounts.values().stream().mapToInt(Integer::intValue).sum();
        run.tokensProduced += tokensThisPass;
        PassResult result = new PassResult(run.name, run.step, run.passIndex, run.persisted, run.newTokenCounts,
                run.tokensProduced, run.partitionDone);
        Transition transition;
        try {
            transition = request.policy.next(result, request.policyRequest);
        } catch (ConductorException e) {
            requests.fail(request, e.type(), e.getMessage());
            return;
        }
        if (transition.kind() == Transition.Kind.NEXT) {
            Step next = transition.next();
            Map<String, List<GraphEdge>> shares;
            try {
                run.startPass(next);
                shares = PassRouting.route(request, next);
            } catch (ConductorException e) {
                requests.fail(request, e.type(), e.getMessage());
                return;
            }
            CurrentForwardPassInfo info = PassRouting.passInfo(request, run);
            // Only workers with inputs get InputSignals: the others learn the walk from their peers' edges. A walk
            // given no inputs at all is announced to each of its workers, so its pass can start.
            Set<String> targets = shares.isEmpty() ? PassRouting.workersOfWalk(request, next.walk()) : shares.keySet();
            for (String worker : targets) {
                send(request, worker, new InputSignals(request.id(),
                        shares.getOrDefault(worker, List.of()), info, run.name, null));
            }
            meters.transition(request.submission.model(), next.walk(),
                    Duration.ofNanos(System.nanoTime() - arrivedNanos));
            unpersist(request, transition.unpersist());
        } else if (transition.kind() == Transition.Kind.AWAIT_STREAM) {
            run.startPass(run.step);
        } else {
            run.done = true;
            unpersist(request, transition.unpersist());
            producerDone(request, run);
            requests.maybeFinish(request);
        }
    }

    /** Tells every partition fed by {@code producer}'s streaming edges that it is done. */
    private void producerDone(ActiveRequest request, ActiveRequest.PartitionRun producer) {
        for (String consumer : request.topology.streamConsumersOf(producer.name)) {
            ActiveRequest.PartitionRun run = request.partitions.get(consumer);
            if (run == null || run.done) {
                continue;
            }
            CurrentForwardPassInfo info = PassRouting.passInfo(request, run);
            for (String worker : PassRouting.workersOfWalk(request, run.step.walk())) {
                send(request, worker, new InputSignals(request.id(), List.of(), info, consumer, Set.of(producer.name)));
            }
        }
    }

    /** {@code UnpersistTensors(uuid -> hand-out count)} to each producer of {@code descriptors}. */
    private void unpersist(ActiveRequest request, List<TensorPointerInfo> descriptors) {
        PassRouting.settleHandOuts(request, descriptors).forEach((producer, counts) ->
                send(request, producer, new UnpersistTensors(request.id(), counts)));
    }

    /**
     * Sends a message that moves a running request on. One the broker refuses (the producer gave up on it) fails the
     * request at once: nothing else would tell the conductor that it was lost, and the request would wait for its
     * deadline. Teardown messages go without this: the drain timeout bounds them.
     */
    private void send(ActiveRequest request, String worker, WorkerMessageBody body) {
        outbox.send(EntityId.parse(worker), body).whenComplete((sent, error) -> {
            if (error != null) {
                toLoop.accept(() -> {
                    if (requests.live(request) && request.state == RequestState.RUNNING) {
                        requests.fail(request, ErrorType.MESSAGE_NOT_DELIVERED, WorkerMessage.of(body).messageType()
                                .value() + " to " + worker + " was refused: " + error);
                    }
                });
            }
        });
    }
}
