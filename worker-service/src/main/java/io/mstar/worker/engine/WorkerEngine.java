package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.NameAndDestination;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.model.ModelGraphs;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.TensorStoreSnapshot;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.RequestScoped;
import io.mstar.wire.StopLoops;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.streaming.StreamBufferException;
import io.mstar.worker.streaming.StreamChunk;
import io.mstar.worker.streaming.StreamEntry;
import io.mstar.worker.streaming.StreamRelease;

/**
 * What a worker does with requests (docs/architecture.md#worker-internals, docs/request-flow.md,
 * docs/worker-runtime.md): request lifecycle, parking and tombstones, passes, loops, batching and routing; input reads
 * and their acks are {@link InputReads}'. Every method runs on the engine loop, which owns all of this state; read
 * completions come back through {@code loopExecutor}. Other threads read only the published {@link EngineSnapshot} and
 * {@link #deviceHealthy()}.
 */
public final class WorkerEngine {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    /** A slot filled by a signal-only edge: no tensor behind it. */
    static final long NO_TENSOR = -1L;
    private static final long SNAPSHOT_INTERVAL_NANOS = 50_000_000L;

    private final EntityId self;
    private final EngineProperties settings;
    private final Map<Integer, WorkerGraph> graphs = new LinkedHashMap<>();
    private final Map<String, ModelGraph> models = new HashMap<>();
    private final KernelCatalog kernels;
    private final DataPlane data;
    private final Outbox outbox;
    private final Executor loopExecutor;
    private final EngineMeters meters;
    private final KvCaches kv;
    private final TensorLedger ledger;
    private final Router router;
    private final LoopAdvance loops;
    private final Scheduler scheduler = new Scheduler();
    private final Tombstones tombstones;
    private final ParkedMessages parked;
    private final Map<String, WorkerRequest> requests = new LinkedHashMap<>();
    private final InputReads reads;
    private final Set<String> inRunningBatch = new HashSet<>();
    /** Removals that arrived while their request was in the running batch, in arrival order. */
    private final Set<String> deferredRemovals = new LinkedHashSet<>();
    private volatile boolean deviceHealthy = true;
    private volatile EngineSnapshot snapshot = EngineSnapshot.EMPTY;
    private long lastSnapshotNanos;
    private long forgottenStreamReads;

    public WorkerEngine(EntityId self, EngineProperties settings, List<WorkerGraph> workerGraphs, KernelCatalog kernels,
            DataPlane data, Outbox outbox, Executor loopExecutor, EngineMeters meters) {
        this(self, settings, workerGraphs, kernels, data, outbox, loopExecutor, meters, KvCaches.none());
    }

    /** With the KV caches of the deployment's autoregressive nodes ({@link KvCaches#of}). */
    public WorkerEngine(EntityId self, EngineProperties settings, List<WorkerGraph> workerGraphs, KernelCatalog kernels,
            DataPlane data, Outbox outbox, Executor loopExecutor, EngineMeters meters, KvCaches kv) {
        this.self = self;
        this.kv = kv;
        this.settings = settings;
        workerGraphs.forEach(g -> graphs.put(g.id(), g));
        this.kernels = kernels;
        this.data = data;
        this.outbox = outbox;
        this.loopExecutor = loopExecutor;
        this.meters = meters;
        this.ledger = new TensorLedger(data);
        this.router = new Router(self, graphs, this::modelGraph, ledger, outbox, settings.inlineOutputMaxBytes());
        this.loops = new LoopAdvance(self, graphs, ledger, router, outbox);
        this.tombstones = new Tombstones(settings.tombstones());
        this.parked = new ParkedMessages(settings.maxParkedPerRequest());
        this.reads = new InputReads(self, ledger, data, outbox, this::onLoop, new ReadCallbacks());
    }

    // ---------------------------------------------------------------- messages

    public void handle(WorkerMessage message) {
        try {
            dispatch(message);
        } catch (DeviceException e) {
            if (e.isFatal()) {
                fatal(e);
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
                fail(request, e);
            } else if (message.body() instanceof NewRequest && !tombstones.contains(scoped.requestId())) {
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
        if (!(message.body() instanceof RequestScoped scoped)) {
            log.warn("{} is not run by this engine (tensor parallelism is not supported yet); dropped",
                    message.messageType().value());
            return;
        }
        String id = scoped.requestId();
        if (tombstones.contains(id)) {
            if (message.body() instanceof DrainRequest) {
                // Removed here already (say, dropped when its conductor went silent): nothing is read for it any more,
                // and a conductor that still holds it waits for this answer.
                reads.readsDone(id);
            }
            dropLate(message);
            return;
        }
        WorkerRequest request = requests.get(id);
        if (request == null) {
            if (message.body() instanceof RemoveRequest) {
                tombstones.add(id);
                parked.take(id).forEach(this::dropLate);
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
            onStopLoops(request, stop);
        } else if (body instanceof DrainRequest drain) {
            onDrain(request, drain);
        } else if (body instanceof RemoveRequest) {
            onRemove(request);
        } else {
            log.warn("{} not handled", message.messageType().value());
        }
    }

    private void park(String requestId, WorkerMessage message) {
        WorkerMessage pushedOut = parked.park(requestId, message);
        if (pushedOut != null) {
            log.warn("request {}: too many parked messages, dropped the oldest {}", requestId,
                    pushedOut.messageType().value());
            dropLate(pushedOut);
        }
    }

    /** A message for a removed request: dropped, its tensor edges acknowledged unread. */
    private void dropLate(WorkerMessage message) {
        meters.dropped(EngineMeters.DROPPED_LATE);
        if (message.body() instanceof InputSignals signals) {
            signals.inputs().forEach(edge -> edge.tensorInfo().forEach(d -> reads.ackUnread(signals.requestId(), d)));
        } else if (message.body() instanceof NewRequest newRequest) {
            newRequest.initialInputs().forEach(edge -> edge.tensorInfo()
                    .forEach(d -> reads.ackUnread(newRequest.requestId(), d)));
        }
    }

    private void onNewRequest(NewRequest message) {
        String id = message.requestId();
        if (tombstones.contains(id)) {
            dropLate(WorkerMessage.of(message));
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
                fail(request, EngineException.typeOf(e), e.getMessage());
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
                if (node.consumesStream() && runsHere(request, graph)) {
                    node.inputNames().forEach(name -> partition.streams.computeIfAbsent(name,
                            n -> new ConsumedStream(kernels.model(model).chunkPolicy(n))));
                }
            }
        }
        request.partitions.put(partitionName, partition);
        if (request.schedulable()) {
            if (partition.streams.isEmpty()) {
                startPass(request, partition, info); // a stream consumer's passes start with its chunks instead
            }
            reads.deliverToNodes(request, partition, message.initialInputs());
        } else {
            message.initialInputs().forEach(edge -> edge.tensorInfo().forEach(d -> reads.ackUnread(id, d)));
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
            signals.inputs().forEach(edge -> edge.tensorInfo().forEach(d -> reads.ackUnread(request.requestId, d)));
            return;
        }
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
                        stream.buffer.register(d.uuid()); // in arrival order of the signals
                        taken.add(d);
                        reads.fetch(request, d, uuid -> landedInStream(stream, d, uuid));
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
            startPass(request, partition, info);
        }
        reads.deliverToNodes(request, partition, nodeEdges);
    }

    /** A streamed token's read landed: the buffer takes the local copy's one reference, or it is dropped now. */
    private void landedInStream(ConsumedStream stream, TensorPointerInfo d, long uuid) {
        try {
            stream.landed(d.uuid(), uuid, ledger.info(uuid).dtype());
        } catch (RuntimeException e) {
            ledger.release(uuid, 1);
            throw e;
        }
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

    private void onStopLoops(WorkerRequest request, StopLoops stop) {
        PartitionState partition = request.partitions.get(stop.partitionName());
        if (partition != null) {
            LoopStops.apply(partition, stop);
        }
    }

    private void onDrain(WorkerRequest request, DrainRequest drain) {
        if (request.end == null) {
            RequestEnd told = RequestEnd.of(drain.outcome());
            // A conductor that does not say: a drain with work still pending here can only be an abort.
            request.end = told != null ? told : request.idle() ? RequestEnd.COMPLETED : RequestEnd.ABORTED;
        }
        request.move(RequestPhase.Event.DRAIN);
        scheduler.removeRequest(request.requestId);
        reads.drained(request);
    }

    private void onRemove(WorkerRequest request) {
        if (inRunningBatch.contains(request.requestId)) {
            deferredRemovals.add(request.requestId);
            return;
        }
        remove(request);
    }

    /**
     * The conductor that drove every request here is gone (restarted, or silent past its loss timeout): nobody will
     * finish, drain or remove them, so they are removed now, their tensors freed and their ids tombstoned so late
     * peer messages are dropped. The conductor is told all the same: one that was only cut off (a broker outage)
     * still holds them, and would otherwise wait for their deadlines. Returns how many went.
     */
    public int dropOrphans(String why) {
        List<WorkerRequest> orphans = List.copyOf(requests.values());
        Map<String, String> errors = new LinkedHashMap<>();
        Map<String, WorkerErrorType> types = new LinkedHashMap<>();
        for (WorkerRequest request : orphans) {
            if (request.end == null) {
                request.end = RequestEnd.CONDUCTOR_LOST;
            }
            if (inRunningBatch.contains(request.requestId)) {
                deferredRemovals.add(request.requestId);
            } else {
                remove(request);
            }
            errors.put(request.requestId, self.value() + " dropped the request: " + why);
            types.put(request.requestId, WorkerErrorType.CONDUCTOR_LOST);
        }
        if (!errors.isEmpty()) {
            outbox.toConductor(ConductorMessage.of(new FailRequests(errors, types)));
        }
        return orphans.size();
    }

    private void remove(WorkerRequest request) {
        String id = request.requestId;
        scheduler.removeRequest(id);
        requests.remove(id);
        tombstones.add(id);
        reads.flushAcks(); // reads that landed are still acknowledged
        parked.take(id).forEach(this::dropLate);
        closeStreams(request);
        try {
            ledger.store().removeRequest(id);
        } catch (RuntimeException e) {
            log.error("request {}: freeing its tensors failed: {}", id, e.toString(), e);
        }
        data.reader().forget(id);
        releasePages(id);
        meters.ended(request.end == null ? RequestEnd.ABORTED : request.end);
    }

    /**
     * Hands back what the request's stream buffers still hold, each tensor once. A token whose read has not landed
     * needs nothing: its landing finds the request gone and drops the bytes unstored ({@link InputReads#fetch}).
     */
    private void closeStreams(WorkerRequest request) {
        for (PartitionState partition : request.partitions.values()) {
            for (ConsumedStream stream : partition.streams.values()) {
                try {
                    StreamRelease<Long> rest = stream.buffer.close();
                    rest.released().forEach(entry -> ledger.release(entry.tensor(), 1));
                    forgottenStreamReads += rest.unlanded().size();
                } catch (RuntimeException e) {
                    log.error("request {}: closing stream '{}' failed: {}", request.requestId, partition.name,
                            e.toString(), e);
                }
            }
        }
    }

    /** A failed or removed request's KV pages (once: a failed request's removal finds none left). */
    private void releasePages(String requestId) {
        try {
            kv.release(requestId);
        } catch (RuntimeException e) {
            log.error("request {}: releasing its KV pages failed: {}", requestId, e.toString(), e);
        }
    }

    // ---------------------------------------------------------------- ingest (reads are InputReads')

    private void ingest(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node, String signal,
            long uuid) {
        if (pass.complete || !request.schedulable() || partition.pass != pass) {
            releaseSlot(uuid);
            return;
        }
        Long old = node.current.putIfAbsent(signal, uuid);
        if (old != null) {
            log.warn("request {}: node {} already has '{}' for this iteration; the second one is dropped",
                    request.requestId, node.node.name(), signal);
            releaseSlot(uuid);
            return;
        }
        LoopState loop = node.loop;
        NameAndDestination key = new NameAndDestination(signal, node.node.name());
        if (loop != null && loop.externalInputs.contains(key) && !loop.retained.containsKey(key) && uuid != NO_TENSOR) {
            ledger.hold(uuid, 1);
            loop.retained.put(key, uuid);
        }
        maybeSchedule(request, partition, pass, node);
    }

    private void maybeSchedule(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node) {
        if (request.schedulable() && node.ready()) {
            scheduler.add(new ReadyItem(request, partition, pass, node));
        }
    }

    private void releaseSlot(long uuid) {
        if (uuid != NO_TENSOR) {
            ledger.release(uuid, 1);
        }
    }

    // ---------------------------------------------------------------- passes

    private boolean runsHere(WorkerRequest request, WorkerGraph graph) {
        List<String> workers = request.workerGraphToWorkers.get(graph.id());
        return workers != null && workers.contains(self.value());
    }

    private void startPass(WorkerRequest request, PartitionState partition, CurrentForwardPassInfo info) {
        List<WorkerGraph> local = partition.workerGraphIds.stream().map(graphs::get)
                .filter(g -> g.walk().equals(info.graphWalk()) && runsHere(request, g)).toList();
        if (local.isEmpty()) {
            partition.pass = null;
            return;
        }
        PartitionPass pass = new PartitionPass(info, local);
        partition.pass = pass;
        LoopStops.onPassStart(partition, pass);
        for (NodeState node : pass.nodes.values()) {
            maybeSchedule(request, partition, pass, node);
        }
    }

    /**
     * Cuts stream chunks for idle partitions; each chunk starts a pass of the partition's walk. A chunk that cannot
     * be cut or started fails its request only.
     */
    private void pollStreams() {
        for (WorkerRequest request : List.copyOf(requests.values())) {
            if (!request.schedulable()) {
                continue;
            }
            try {
                for (PartitionState partition : request.partitions.values()) {
                    if (partition.streams.isEmpty() || !partition.idle()) {
                        continue;
                    }
                    for (Map.Entry<String, ConsumedStream> stream : partition.streams.entrySet()) {
                        Optional<StreamChunk<Long>> chunk = stream.getValue().buffer.poll();
                        if (chunk.isPresent()) {
                            startChunkPass(request, partition, stream.getKey(), stream.getValue(), chunk.get());
                            break;
                        }
                    }
                }
            } catch (DeviceException e) {
                if (e.isFatal()) {
                    fatal(e);
                    return;
                }
                fail(request, WorkerErrorType.DEVICE_ERROR, "cutting a stream chunk failed: " + e.getMessage());
            } catch (RuntimeException e) {
                log.warn("request {}: cutting a stream chunk failed: {}", request.requestId, e.toString(), e);
                fail(request, e);
            }
        }
    }

    /**
     * The chunk's tensors, context then fresh, concatenated along dim 0 into the consuming node's input. The tokens
     * the chunk released are dereferenced once here, joined or not; the others stay the buffer's for later chunks.
     */
    private void startChunkPass(WorkerRequest request, PartitionState partition, String edge, ConsumedStream stream,
            StreamChunk<Long> chunk) {
        partition.reportSentNanos = 0; // a chunk, not the conductor, starts this pass
        long uuid;
        try {
            Tensor joined = ledger.concatenate(chunk.tensors(), stream.dtype);
            uuid = ledger.storeMade(request.requestId, joined); // its one reference is the consumer node's
        } finally {
            for (StreamEntry<Long> released : chunk.released()) {
                ledger.release(released.tensor(), 1);
            }
        }
        startPass(request, partition, partition.info);
        PartitionPass pass = partition.pass;
        NodeState consumer = pass == null ? null : pass.nodes.values().stream()
                .filter(n -> n.node.consumesStream() && n.node.inputNames().contains(edge)).findFirst().orElse(null);
        if (consumer == null) {
            ledger.release(uuid, 1);
            throw new EngineException(EngineException.Reason.BAD_MESSAGE, "no node of walk "
                    + partition.info.graphWalk() + " consumes stream '" + edge + "' here");
        }
        pass.finalStreamChunk = chunk.isFinal();
        ingest(request, partition, pass, consumer, edge, uuid);
    }

    // ---------------------------------------------------------------- batches

    /** One turn of work after the commands: stream chunks, one batch, acks, published state. Answers whether more is ready. */
    public boolean turn(long nowNanos) {
        try {
            pollStreams();
        } catch (DeviceException e) {
            if (e.isFatal()) {
                fatal(e);
            }
        } catch (RuntimeException e) {
            log.warn("cutting stream chunks failed: {}", e.toString(), e);
        }
        runBatch();
        reads.flushAcks();
        // Every 50 ms at most, busy or idle (an idle loop still turns every tick): a snapshot walks every live tensor,
        // and publishing one whenever the queue ran dry cost a busy loop that walk on nearly every turn.
        if (nowNanos - lastSnapshotNanos > SNAPSHOT_INTERVAL_NANOS) {
            publishSnapshot();
            lastSnapshotNanos = nowNanos;
        }
        return scheduler.queued() > 0;
    }

    private void runBatch() {
        List<ReadyItem> batch = scheduler.next(key -> Math.min(settings.maxBatchSize(),
                kernels.model(key.model()).kernel(key.node()).maxBatchSize()));
        if (batch.isEmpty()) {
            return;
        }
        Scheduler.Key key = Scheduler.key(batch.get(0));
        NodeKernel kernel = kernels.model(key.model()).kernel(key.node());
        List<NodeCall> calls = new ArrayList<>(batch.size());
        for (ReadyItem item : batch) {
            Map<String, Tensor> inputs = new HashMap<>();
            item.node().current.forEach((name, uuid) -> {
                if (uuid != NO_TENSOR) {
                    inputs.put(name, ledger.tensor(uuid));
                }
            });
            calls.add(new NodeCall(item.request().requestId, inputs, item.pass().info, item.pass().position(item.node())));
            inRunningBatch.add(item.request().requestId);
        }
        long start = System.nanoTime();
        List<NodeResult> results;
        try {
            results = kernel instanceof KvCacheKernel kvKernel
                    ? kv.forward(key.model(), key.node(), kvKernel, data.device(), calls)
                    : kernel.forward(data.device(), calls);
            if (results.size() != calls.size()) {
                throw new EngineException(EngineException.Reason.KERNEL_FAILED, "kernel of " + key.node()
                        + " answered " + results.size() + " results for " + calls.size() + " calls");
            }
        } catch (DeviceException e) {
            batch.forEach(item -> item.node().queued = false);
            inRunningBatch.clear();
            if (e.isFatal()) {
                fatal(e);
            } else {
                batch.forEach(item -> fail(item.request(), WorkerErrorType.DEVICE_ERROR,
                        "batch of " + key.node() + " failed: " + e.getMessage()));
            }
            removeDeferred();
            return;
        } catch (RuntimeException e) {
            log.warn("batch of {} ({} requests) failed: {}", key.node(), batch.size(), e.toString(), e);
            batch.forEach(item -> item.node().queued = false);
            inRunningBatch.clear();
            WorkerErrorType type = EngineException.typeOf(e);
            batch.forEach(item -> fail(item.request(), type, "batch of " + key.node() + " failed: " + e));
            removeDeferred();
            return;
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        meters.batch(key.model(), key.node(), key.walk(), batch.size(), seconds);
        for (int i = 0; i < batch.size(); i++) {
            ReadyItem item = batch.get(i);
            NodeResult result = results.get(i);
            item.node().queued = false;
            if (requests.get(item.request().requestId) != item.request()) {
                result.outputs().values().forEach(t -> data.device().free(t.buffer()));
                continue;
            }
            if (result.failed()) {
                fail(item.request(), result.errorType(), result.error());
                continue;
            }
            try {
                complete(item, result, seconds);
            } catch (DeviceException e) {
                if (e.isFatal()) {
                    fatal(e);
                    break;
                }
                fail(item.request(), e);
            } catch (RuntimeException e) {
                log.warn("request {}: after {} failed: {}", item.request().requestId, key.node(), e.toString(), e);
                fail(item.request(), e);
            }
        }
        inRunningBatch.clear();
        removeDeferred();
    }

    private void removeDeferred() {
        for (String id : List.copyOf(deferredRemovals)) {
            WorkerRequest request = requests.get(id);
            if (request != null) {
                remove(request);
            }
        }
        deferredRemovals.clear();
    }

    /** A node's outputs for one request: release its inputs, store and route its outputs, advance loops and the pass. */
    private void complete(ReadyItem item, NodeResult result, double seconds) {
        WorkerRequest request = item.request();
        PartitionState partition = item.partition();
        PartitionPass pass = item.pass();
        NodeState node = item.node();
        pass.time(node.node.name(), seconds);
        NestedLoopIndices position = pass.position(node);
        node.current.values().forEach(this::releaseSlot);
        node.current.clear();
        node.ran = true;
        Map<String, Long> outputs = new LinkedHashMap<>();
        result.outputs().forEach((name, tensor) ->
                outputs.put(name, ledger.storeOutput(request.requestId, tensor, node.node.name(), pass.walk)));
        try {
            LoopState loop = node.loop;
            List<GraphEdge> now = new ArrayList<>();
            for (GraphEdge edge : node.node.outputs()) {
                if (loop == null) {
                    now.add(edge);
                } else if (loop.loopBack.contains(new NameAndDestination(edge.name(), edge.nextNode()))) {
                    loops.loopBack(pass, edge, outputs.get(edge.name()));
                } else if (loop.bodyNodes.contains(edge.nextNode()) || SpecialDestinations.isSpecial(edge.nextNode())
                        || (edge.isStreaming() && edge.targetPartition() != null)) {
                    now.add(edge);
                }
                // Other edges leave the loop only as its declared outputs, after the last iteration.
            }
            if (loop != null) {
                loops.keep(loop, outputs);
                if (result.finish()) {
                    loop.finishRequested = true;
                    loop.finishedLocally = true;
                }
            }
            router.route(request, partition, pass, now, outputs, position,
                    (target, signal, uuid) -> ingest(request, partition, pass, target, signal, uuid));
        } finally {
            outputs.values().forEach(uuid -> ledger.release(uuid, 1)); // the safety hold
        }
        if (node.loop != null) {
            loops.endIterationIfDone(request, partition, pass, node.loop,
                    (target, signal, uuid) -> ingest(request, partition, pass, target, signal, uuid),
                    body -> maybeSchedule(request, partition, pass, body));
        }
        completePassIfDone(request, partition, pass);
    }

    private void completePassIfDone(WorkerRequest request, PartitionState partition, PartitionPass pass) {
        if (pass.complete || !pass.allRan()) {
            return;
        }
        pass.complete = true;
        report(request, partition, pass);
        while (partition.idle() && !partition.pending.isEmpty() && request.schedulable()) {
            InputSignals next = partition.pending.poll();
            onInputSignals(request, next, WorkerMessage.of(next));
        }
    }

    /** WorkerGraphsDone, once the broker acknowledged every send of the request so far and the previous report. */
    private void report(WorkerRequest request, PartitionState partition, PartitionPass pass) {
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
                .graphTimings(pass.timings)
                .build();
        List<CompletableFuture<?>> gate = new ArrayList<>(request.unackedSends);
        gate.add(request.lastReport);
        request.unackedSends = new ArrayList<>();
        CompletableFuture<Object> sent = new CompletableFuture<>();
        request.lastReport = sent;
        CompletableFuture.allOf(gate.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> onLoop(() -> {
            if (requests.get(request.requestId) != request || !request.schedulable()) {
                sent.complete(null);
                return;
            }
            if (error != null) {
                fail(request, WorkerErrorType.MESSAGE_NOT_DELIVERED, "a send was not acknowledged by the broker: " + error);
                sent.complete(null);
                return;
            }
            // Signals already pending started the next pass: nothing waited on this report.
            partition.reportSentNanos = partition.idle() ? System.nanoTime() : 0;
            outbox.toConductor(ConductorMessage.of(done)).whenComplete((r, e) -> {
                if (e != null) {
                    // Nothing else would tell the conductor this pass ended: the request would wait for its deadline.
                    onLoop(() -> fail(request, WorkerErrorType.MESSAGE_NOT_DELIVERED,
                            "the report of a pass was not acknowledged by the broker: " + e));
                }
                sent.complete(null);
            });
        }));
    }

    // ---------------------------------------------------------------- failures

    private void fail(WorkerRequest request, RuntimeException e) {
        fail(request, EngineException.typeOf(e), e.toString());
    }

    private void fail(WorkerRequest request, WorkerErrorType type, String error) {
        if (request.phase != RequestPhase.ACTIVE) {
            return;
        }
        request.move(RequestPhase.Event.FAIL);
        request.end = RequestEnd.FAILED;
        scheduler.removeRequest(request.requestId);
        releasePages(request.requestId);
        outbox.toConductor(ConductorMessage.of(FailRequests.of(request.requestId, type, error)));
    }

    /** A sticky device error: every request here fails and liveness goes down so the platform replaces the worker. */
    private void fatal(DeviceException e) {
        log.error("fatal device error on {}: every request fails and liveness goes down", data.device().name(), e);
        deviceHealthy = false;
        Map<String, String> errors = new LinkedHashMap<>();
        Map<String, WorkerErrorType> types = new LinkedHashMap<>();
        for (WorkerRequest request : requests.values()) {
            if (request.phase == RequestPhase.ACTIVE) {
                request.move(RequestPhase.Event.FAIL);
                request.end = RequestEnd.FAILED;
                scheduler.removeRequest(request.requestId);
                releasePages(request.requestId);
                errors.put(request.requestId, "fatal device error: " + e.getMessage());
                types.put(request.requestId, WorkerErrorType.DEVICE_FATAL);
            }
        }
        if (!errors.isEmpty()) {
            outbox.toConductor(ConductorMessage.of(new FailRequests(errors, types)));
        }
    }

    /** The engine's side of {@link InputReads}: the few ways a landed read changes a request. */
    private final class ReadCallbacks implements InputReads.Callbacks {

        @Override
        public boolean live(WorkerRequest request) {
            return requests.get(request.requestId) == request;
        }

        @Override
        public void fail(WorkerRequest request, WorkerErrorType type, String error) {
            WorkerEngine.this.fail(request, type, error);
        }

        @Override
        public void fatal(DeviceException e) {
            WorkerEngine.this.fatal(e);
        }

        @Override
        public void ingest(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node,
                String signal, long uuid) {
            WorkerEngine.this.ingest(request, partition, pass, node, signal, uuid);
        }
    }

    // ---------------------------------------------------------------- plumbing

    private void onLoop(Runnable command) {
        try {
            loopExecutor.execute(command);
        } catch (RuntimeException e) {
            log.debug("engine loop stopped; a completion is dropped: {}", e.toString());
        }
    }

    private ModelGraph modelGraph(String model) {
        return models.computeIfAbsent(model, ModelGraphs::of);
    }

    private void publishSnapshot() {
        TensorStoreSnapshot tensors = ledger.store().snapshot();
        int reads = requests.values().stream().mapToInt(r -> r.readsInFlight).sum();
        snapshot = new EngineSnapshot(requests.size(), scheduler.queuedRequests(), scheduler.queued(), parked.size(),
                reads, tombstones.size(), tensors);
    }

    /** Frees everything at shutdown, on the loop (docs/architecture.md#the-owner-releases). */
    public void shutdown() {
        try {
            ledger.store().removeAll();
        } finally {
            kv.close();
            requests.clear();
            publishSnapshot();
        }
    }

    /** Publishes and answers the snapshot now; on the loop only (tests' leak checks). */
    EngineSnapshot snapshotNow() {
        publishSnapshot();
        return snapshot;
    }

    /** What other threads may read: published each turn. */
    public EngineSnapshot snapshot() {
        return snapshot;
    }

    public boolean deviceHealthy() {
        return deviceHealthy;
    }

    /** Streamed tokens whose reads had not landed when their request was removed (dropped when they land). */
    long forgottenStreamReads() {
        return forgottenStreamReads;
    }

    /** Reads that landed after their request was removed, dropped unstored. */
    long landedAfterRemoval() {
        return reads.landedAfterRemoval();
    }

    /** Releases of tensors no longer held: a double release would show here (tests' exactly-once checks). */
    long unknownReleases() {
        return ledger.unknownReleases();
    }
}
