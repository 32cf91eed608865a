package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.loop.OwnerThread;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.MessageSource;
import io.mstar.wire.NewRequest;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.RequestScoped;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.StopLoops;
import io.mstar.wire.TPNoSpeculation;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.streaming.StreamBufferException;

/**
 * Every control message a worker receives, on the engine loop (docs/request-flow.md, docs/worker-runtime.md#intake): a
 * message for a request not known yet is parked until its {@code NewRequest}, one for a removed request is dropped
 * (its tensor edges acknowledged unread), and the rest go to the request. A message that fails fails its request
 * alone; a fatal device error fails the worker. Owned by the engine loop.
 */
final class MessageIntake {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    private final OwnerThread owner;
    private final Map<Integer, WorkerGraph> graphs;
    private final KernelCatalog kernels;
    private final Map<String, WorkerRequest> requests;
    private final ParkedMessages parked;
    private final Scheduler scheduler;
    private final InputReads reads;
    private final TensorLedger ledger;
    private final Passes passes;
    private final StreamPasses streams;
    private final RequestTeardown teardown;
    private final Outbox outbox;
    private final EngineMeters meters;
    private final Lockstep lockstep;

    MessageIntake(OwnerThread owner, Map<Integer, WorkerGraph> graphs, KernelCatalog kernels,
            Map<String, WorkerRequest> requests, ParkedMessages parked, Scheduler scheduler, InputReads reads,
            TensorLedger ledger, Passes passes, StreamPasses streams, RequestTeardown teardown, Outbox outbox,
            EngineMeters meters, Lockstep lockstep) {
        this.owner = owner;
        this.graphs = graphs;
        this.kernels = kernels;
        this.requests = requests;
        this.parked = parked;
        this.scheduler = scheduler;
        this.reads = reads;
        this.ledger = ledger;
        this.passes = passes;
        this.streams = streams;
        this.teardown = teardown;
        this.outbox = outbox;
        this.meters = meters;
        this.lockstep = lockstep;
    }

    void handle(WorkerMessage message) {
        owner.check();
        try {
            dispatch(message);
        } catch (DeviceException e) {
            if (e.isFatal()) {
                teardown.fatal(e);
            } else {
                failOwner(message, e);
            }
        } catch (RuntimeException e) {
            log.warn("{} failed: {}", message.messageType().value(), e.toString(), e);
            failOwner(message, e);
        }
    }

    private void failOwner(WorkerMessage message, RuntimeException e) {
        if (message.body() instanceof RequestScoped scoped) {
            WorkerRequest request = requests.get(scoped.requestId());
            if (request != null) {
                teardown.fail(request, e);
            } else if (message.body() instanceof NewRequest && !teardown.tombstoned(scoped.requestId())) {
                // refused before it was created (e.g. worker graphs of another deployment): the conductor must know
                outbox.toConductor(ConductorMessage.of(
                        FailRequests.of(scoped.requestId(), EngineException.typeOf(e), e.toString())));
            }
        }
    }

    private void dispatch(WorkerMessage message) {
        if (message.body() instanceof NewRequest newRequest) {
            onNewRequest(newRequest);
            return;
        }
        if (message.body() instanceof ScheduleTPNode schedule) {
            lockstep.follower().onSchedule(schedule);
            return;
        }
        if (message.body() instanceof TPNoSpeculation none) {
            lockstep.follower().onNoSpeculation(none);
            return;
        }
        if (!(message.body() instanceof RequestScoped scoped)) {
            log.warn("{} is not handled by a worker; dropped", message.messageType().value());
            return;
        }
        String id = scoped.requestId();
        if (teardown.tombstoned(id)) {
            if (message.body() instanceof DrainRequest) {
                // Removed here already (say, dropped when its conductor went silent): nothing is read for it any more,
                // and a conductor that still holds it waits for this answer.
                reads.readsDone(id);
            }
            teardown.dropLate(message);
            return;
        }
        WorkerRequest request = requests.get(id);
        if (request == null) {
            if (message.body() instanceof RemoveRequest) {
                teardown.tombstone(id);
                parked.take(id).forEach(teardown::dropLate);
                return;
            }
            if (message.body() instanceof DrainRequest) {
                // Nothing read for it here, so nothing to wait for; parked too in case its NewRequest is late.
                reads.readsDone(id);
            }
            park(id, message);
            return;
        }
        Object body = message.body();
        if (body instanceof InputSignals signals) {
            onInputSignals(request, signals, message);
        } else if (body instanceof TensorReceived received) {
            onTensorReceived(received);
        } else if (body instanceof UnpersistTensors unpersist) {
            onUnpersist(unpersist);
        } else if (body instanceof StopLoops stop) {
            PartitionState partition = request.partitions.get(stop.partitionName());
            if (partition != null) {
                LoopStops.apply(partition, stop);
            }
        } else if (body instanceof DrainRequest drain) {
            onDrain(request, drain);
        } else if (body instanceof RemoveRequest removal) {
            onRemove(request, removal);
        } else {
            log.warn("{} not handled", message.messageType().value());
        }
    }

    private void park(String requestId, WorkerMessage message) {
        WorkerMessage pushedOut = parked.park(requestId, message);
        if (pushedOut != null) {
            log.warn("request {}: too many parked messages, dropped the oldest {}", requestId,
                    pushedOut.messageType().value());
            teardown.dropLate(pushedOut);
        }
    }

    private void onNewRequest(NewRequest message) {
        String id = message.requestId();
        if (teardown.tombstoned(id)) {
            teardown.dropLate(WorkerMessage.of(message));
            return;
        }
        List<WorkerGraph> partitionGraphs = message.partitionWorkerGraphIds().stream().map(graphs::get).toList();
        if (partitionGraphs.isEmpty() || partitionGraphs.contains(null)) {
            throw new EngineException(EngineException.Reason.BAD_MESSAGE, "request " + id
                    + " names worker graphs " + message.partitionWorkerGraphIds() + " not all of this deployment");
        }
        String model = partitionGraphs.get(0).model();
        WorkerRequest request = requests.get(id);
        if (request == null) {
            request = new WorkerRequest(id, model, message.workerGraphToWorkers());
            requests.put(id, request);
            try {
                kernels.model(model);
            } catch (RuntimeException e) {
                teardown.fail(request, EngineException.typeOf(e), e.getMessage());
            }
        }
        CurrentForwardPassInfo info = message.requestInfo();
        String partitionName = info.partitionName();
        if (request.partitions.containsKey(partitionName)) {
            log.info("request {}: duplicate NewRequest for partition {} ignored", id, partitionName);
            return;
        }
        PartitionState partition = new PartitionState(partitionName, message.partitionWorkerGraphIds(), info);
        for (WorkerGraph graph : partitionGraphs) {
            for (GraphNode node : graph.piece().nodes().values()) {
                if (node.consumesStream() && passes.runsHere(request, graph)) {
                    node.inputNames().forEach(name -> partition.streams.computeIfAbsent(name,
                            n -> new ConsumedStream(kernels.model(model).chunkPolicy(n))));
                }
            }
        }
        request.partitions.put(partitionName, partition);
        if (request.schedulable()) {
            if (partition.streams.isEmpty()) {
                passes.start(request, partition, info); // a stream consumer's passes start with its chunks instead
            }
            reads.deliverToNodes(request, partition, reads.landInline(request, message));
        } else {
            reads.ackUnread(message);
        }
        for (WorkerMessage replay : parked.take(id)) {
            handle(replay);
        }
    }

    private void onInputSignals(WorkerRequest request, InputSignals signals, WorkerMessage message) {
        PartitionState partition = request.partitions.get(signals.partitionName());
        if (partition == null) {
            park(request.requestId, message); // its partition's NewRequest is still on the way
            return;
        }
        if (!request.schedulable()) {
            reads.ackUnread(signals);
            return;
        }
        deliver(request, partition, reads.landInline(request, signals));
    }

    /** Signals for a known, schedulable request, their inline tensors stored here. */
    private void deliver(WorkerRequest request, PartitionState partition, InputSignals signals) {
        if (!signals.producerDone().isEmpty()) {
            partition.streams.values().forEach(stream -> stream.buffer.producerDone());
        }
        List<GraphEdge> nodeEdges = new ArrayList<>();
        Set<TensorPointerInfo> taken = new HashSet<>();
        try {
            for (GraphEdge edge : signals.inputs()) {
                if (edge.isStreaming()) {
                    ConsumedStream stream = partition.streams.get(edge.name());
                    if (stream == null) {
                        throw new EngineException(EngineException.Reason.BAD_MESSAGE, "partition '" + partition.name
                                + "' consumes no stream '" + edge.name() + "'");
                    }
                    for (TensorPointerInfo d : edge.tensorInfo()) {
                        taken.add(d);
                        streams.take(request, stream, d);
                    }
                } else {
                    nodeEdges.add(edge);
                }
            }
        } catch (EngineException | StreamBufferException e) {
            // The request fails (handle); what it will not read is acknowledged, so producers drop their hand-outs.
            signals.inputs().forEach(edge -> edge.tensorInfo().stream().filter(d -> !taken.contains(d))
                    .forEach(d -> reads.ackUnread(request.requestId, d)));
            throw e;
        }
        if (nodeEdges.isEmpty()) {
            return; // streaming-only signals never touch the pass info
        }
        CurrentForwardPassInfo info = signals.requestInfo();
        if (partition.reportSentNanos != 0) {
            meters.transitionWait(request.model, info.graphWalk(), System.nanoTime() - partition.reportSentNanos);
            partition.reportSentNanos = 0;
        }
        if (!partition.idle() && !partition.pass.walk.equals(info.graphWalk())) {
            partition.pending.add(new InputSignals(signals.requestId(), nodeEdges, info, signals.partitionName(), null));
            return;
        }
        partition.info = info;
        if (partition.idle()) {
            passes.start(request, partition, info);
        }
        reads.deliverToNodes(request, partition, nodeEdges);
    }

    /** Signals that waited for the partition's previous pass: they start its next one. */
    void resume(WorkerRequest request, InputSignals pending) {
        onInputSignals(request, pending, WorkerMessage.of(pending));
    }

    private void onTensorReceived(TensorReceived received) {
        received.successfulTensors().forEach((uuid, n) -> {
            if (ledger.holds(uuid)) {
                ledger.release(uuid, n);
            } else {
                meters.dropped(EngineMeters.DROPPED_STALE_ACK); // freed already (its request was removed, or a duplicate ack)
            }
        });
        if (!received.failedTensorIds().isEmpty()) {
            log.warn("request {}: a consumer failed to read {}", received.requestId(), received.failedTensorIds());
        }
    }

    private void onUnpersist(UnpersistTensors unpersist) {
        unpersist.uuidToRefCount().forEach((uuid, n) -> {
            if (!ledger.unpersist(uuid, n)) {
                meters.dropped(EngineMeters.DROPPED_STALE_ACK);
            }
        });
    }

    /**
     * A tensor-parallel follower leaves a request's removal to its leader, which relays it after the last batch that
     * named the request (docs/tensor-parallelism.md#removal-relay).
     */
    private void onRemove(WorkerRequest request, RemoveRequest removal) {
        if (removal.source() == MessageSource.TP_RANK_0) {
            lockstep.follower().onRelayedRemoval(request, removal);
        } else if (lockstep.follows(request)) {
            lockstep.follower().onConductorRemoval(request); // waits for the leader's relay, boundedly
        } else {
            teardown.remove(request);
        }
    }

    private void onDrain(WorkerRequest request, DrainRequest drain) {
        if (request.end == null) {
            RequestEnd told = RequestEnd.of(drain.outcome());
            // A conductor that does not say: a drain with work still pending here can only be an abort.
            request.end = told != null ? told : request.idle() ? RequestEnd.COMPLETED : RequestEnd.ABORTED;
        }
        if (lockstep.follows(request)) {
            lockstep.follower().oweDrain(request); // it runs on while the leader names it; ReadsDone once none queued does
            return;
        }
        request.move(RequestPhase.Event.DRAIN);
        scheduler.removeRequest(request.requestId);
        reads.drained(request);
    }
}
