package io.mstar.worker.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.TensorAcks;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerMessage;

/**
 * A pass's input tensors on their way into this worker (docs/architecture.md#tensor-lifetime, docs/request-flow.md):
 * each is taken from the local store or read from its producer, counted in flight on its request until it lands (what
 * {@link ReadsDone} waits for), acknowledged with {@link TensorReceived} through {@link TensorAcks}, and handed to its
 * node.
 *
 * <p>Owned by the engine loop, like the {@link WorkerEngine} that calls it and the {@link WorkerRequest}s it counts
 * on: every method runs there, so nothing is locked. Reads complete on transport threads and come back through
 * {@code toLoop}; what a landed read does to the request goes to the {@link Callbacks}.
 */
final class InputReads {

    // The category the engine logged under before reads had their own class; log filters on it keep matching.
    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    /**
     * What reads need from the engine's requests: a landed read's request may be gone by then. Called
     * on the loop.
     */
    interface Callbacks extends RequestFailures {

        /** Whether {@code request} is still the live request under its id (not removed, nor replaced). */
        boolean live(WorkerRequest request);

        /** Gives a node its input for the pass: the uuid holds one reference, or is {@link WorkerEngine#NO_TENSOR}. */
        void ingest(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node, String signal,
                long uuid);
    }

    private final EntityId self;
    private final TensorLedger ledger;
    private final DataPlane data;
    private final Outbox outbox;
    private final Consumer<Runnable> toLoop;
    private final Callbacks requests;
    private final TensorAcks acks = new TensorAcks();
    private long landedAfterRemoval;

    InputReads(EntityId self, TensorLedger ledger, DataPlane data, Outbox outbox, Consumer<Runnable> toLoop,
            Callbacks requests) {
        this.self = self;
        this.ledger = ledger;
        this.data = data;
        this.outbox = outbox;
        this.toLoop = toLoop;
        this.requests = requests;
    }

    /** Reads each edge's tensor and hands it to the edge's node in the partition's current pass. */
    void deliverToNodes(WorkerRequest request, PartitionState partition, List<GraphEdge> edges) {
        PartitionPass pass = partition.pass;
        for (GraphEdge edge : edges) {
            NodeState node = pass == null ? null : pass.nodes.get(edge.nextNode());
            if (node == null) {
                edge.tensorInfo().forEach(d -> ackUnread(request.requestId, d));
                throw new EngineException(EngineException.Reason.BAD_MESSAGE, "edge '" + edge.name() + "' for node '"
                        + edge.nextNode() + "', which this worker does not run in walk " + partition.info.graphWalk());
            }
            if (edge.tensorInfo().isEmpty()) {
                requests.ingest(request, partition, pass, node, edge.name(), WorkerEngine.NO_TENSOR);
            } else if (edge.tensorInfo().size() > 1) {
                edge.tensorInfo().forEach(d -> ackUnread(request.requestId, d));
                throw new EngineException(EngineException.Reason.BAD_MESSAGE, "edge '" + edge.name() + "' carries "
                        + edge.tensorInfo().size() + " tensors; a node input takes one");
            } else {
                fetch(request, edge.tensorInfo().get(0),
                        uuid -> requests.ingest(request, partition, pass, node, edge.name(), uuid));
            }
        }
    }

    /**
     * Stores the tensors {@code signals} carries inline, each holding one reference as a landed read does, and answers
     * the signals with those descriptors naming the copies stored here: from then on each goes as a tensor this worker
     * handed to itself ({@link #fetch}), never read, never acknowledged. What it stored is released again when one
     * cannot be stored.
     *
     * @throws EngineException (BAD_MESSAGE) when an entry is not base64 of the described size
     */
    InputSignals landInline(WorkerRequest request, InputSignals signals) {
        if (!signals.inline()) {
            return signals;
        }
        return new InputSignals(signals.requestId(), landInline(request, signals.inputs(), signals.inlineData()),
                signals.requestInfo(), signals.partitionName(), signals.producerDone());
    }

    /** {@link #landInline(WorkerRequest, InputSignals)} for a {@code NewRequest}'s initial inputs. */
    List<GraphEdge> landInline(WorkerRequest request, NewRequest message) {
        return message.inline() ? landInline(request, message.initialInputs(), message.inlineData())
                : message.initialInputs();
    }

    private List<GraphEdge> landInline(WorkerRequest request, List<GraphEdge> edges, List<String> inlineData) {
        List<Long> stored = new ArrayList<>();
        List<GraphEdge> landed = new ArrayList<>(edges.size());
        int entry = 0;
        try {
            for (GraphEdge edge : edges) {
                List<TensorPointerInfo> here = new ArrayList<>(edge.tensorInfo().size());
                for (TensorPointerInfo d : edge.tensorInfo()) {
                    ByteBuffer bytes = inlineBytes(d, inlineData.get(entry++));
                    long uuid = ledger.storeReceived(request.requestId, d, bytes);
                    stored.add(uuid);
                    here.add(ledger.info(uuid));
                }
                landed.add(edge.toBuilder().tensorInfo(here).build());
            }
        } catch (RuntimeException e) {
            stored.forEach(uuid -> ledger.release(uuid, 1));
            throw e;
        }
        return landed;
    }

    private static ByteBuffer inlineBytes(TensorPointerInfo d, String base64) {
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw new EngineException(EngineException.Reason.BAD_MESSAGE, "inline_data of tensor " + d.uuid()
                    + " is not base64: " + e.getMessage());
        }
        if (decoded.length != d.nbytes()) {
            throw new EngineException(EngineException.Reason.BAD_MESSAGE, "inline_data of tensor " + d.uuid() + " has "
                    + decoded.length + " bytes; its descriptor says " + d.nbytes());
        }
        return ByteBuffer.allocateDirect(decoded.length).put(decoded).flip();
    }

    /** Signals this worker will not take: each tensor it would have read is acknowledged unread (inline ones: none). */
    void ackUnread(InputSignals signals) {
        if (!signals.inline()) {
            ackUnread(signals.requestId(), signals.inputs());
        }
    }

    /** {@link #ackUnread(InputSignals)} for a {@code NewRequest}'s initial inputs. */
    void ackUnread(NewRequest message) {
        if (!message.inline()) {
            ackUnread(message.requestId(), message.initialInputs());
        }
    }

    private void ackUnread(String requestId, List<GraphEdge> edges) {
        edges.forEach(edge -> edge.tensorInfo().forEach(d -> ackUnread(requestId, d)));
    }

    /**
     * Gets a handed-out tensor: ours already (no copy: take a node reference and settle the hand-out as its own ack),
     * or a read from the producer, acknowledged once the bytes landed. {@code then} gets the local uuid, holding one
     * reference, on the loop.
     */
    void fetch(WorkerRequest request, TensorPointerInfo d, LongConsumer then) {
        if (d.sourceEntity().equals(self.value())) {
            if (!ledger.holds(d.uuid())) {
                throw new EngineException(EngineException.Reason.READ_FAILED, "tensor " + d.uuid()
                        + " was handed out by this worker but is freed");
            }
            ledger.hold(d.uuid(), 1);
            ledger.release(d.uuid(), 1);
            then.accept(d.uuid());
            return;
        }
        ByteBuffer bytes = ByteBuffer.allocateDirect((int) d.nbytes());
        request.readsInFlight++;
        CompletableFuture<?> read;
        try {
            read = data.reader().read(request.requestId, d, bytes);
        } catch (RuntimeException e) {
            read = CompletableFuture.failedFuture(e);
        }
        read.whenComplete((result, error) -> toLoop.accept(() -> landed(request, d, bytes, error, then)));
    }

    private void landed(WorkerRequest request, TensorPointerInfo d, ByteBuffer bytes, Throwable error, LongConsumer then) {
        request.readsInFlight--;
        if (!requests.live(request)) {
            landedAfterRemoval++;
            return; // removed meanwhile, bytes never stored: the producer freed its side in the same teardown
        }
        if (error != null) {
            owe(request.requestId, d, false);
            requests.fail(request, WorkerErrorType.INPUT_READ_FAILED,
                    "reading tensor " + d.uuid() + " from " + d.sourceEntity() + " failed: " + error);
        } else {
            owe(request.requestId, d, true);
            if (request.schedulable()) {
                try {
                    long uuid = ledger.storeReceived(request.requestId, d, bytes);
                    then.accept(uuid);
                } catch (DeviceException e) {
                    if (e.isFatal()) {
                        requests.fatal(e);
                    } else {
                        requests.fail(request, WorkerErrorType.DEVICE_ERROR,
                                "storing tensor " + d.uuid() + " failed: " + e.getMessage());
                    }
                } catch (RuntimeException e) {
                    log.warn("request {}: ingesting tensor {} failed: {}", request.requestId, d.uuid(), e.toString(), e);
                    requests.fail(request, EngineException.typeOf(e), e.toString());
                }
            }
        }
        if (request.readsDoneOwed && request.readsInFlight == 0) {
            request.readsDoneOwed = false;
            readsDone(request.requestId);
        }
    }

    /** A draining request: ReadsDone now if nothing is in flight, else once its last read lands. */
    void drained(WorkerRequest request) {
        if (request.readsInFlight == 0) {
            readsDone(request.requestId);
        } else {
            request.readsDoneOwed = true;
        }
    }

    /** Tells the conductor that no read of the request is in flight here: it may remove the request. */
    void readsDone(String requestId) {
        outbox.toConductor(ConductorMessage.of(new ReadsDone(requestId, self.value())));
    }

    /** A tensor edge this worker will not read: the producer may drop the hand-out's reference. */
    void ackUnread(String requestId, TensorPointerInfo d) {
        if (d.sourceEntity().equals(self.value())) {
            if (ledger.holds(d.uuid())) {
                ledger.release(d.uuid(), 1);
            }
        } else {
            owe(requestId, d, true);
        }
    }

    /** Only workers are acknowledged: the conductor frees its inputs at {@code RemoveRequest}. */
    private void owe(String requestId, TensorPointerInfo d, boolean landed) {
        EntityId producer = EntityId.parse(d.sourceEntity());
        if (!producer.isWorker()) {
            return;
        }
        if (landed) {
            acks.landed(requestId, producer, d.uuid());
        } else {
            acks.failed(requestId, producer, d.uuid());
        }
    }

    /** Sends the acknowledgements collected since the last flush. */
    void flushAcks() {
        acks.flush((producer, message) -> outbox.toWorker(producer, WorkerMessage.of(message)));
    }

    /** Reads that landed after their request was removed, dropped unstored. */
    long landedAfterRemoval() {
        return landedAfterRemoval;
    }
}
