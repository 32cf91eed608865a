package io.mstar.worker.engine;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.loop.OwnerThread;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.streaming.StreamChunk;
import io.mstar.worker.streaming.StreamEntry;
import io.mstar.worker.streaming.StreamRelease;

/**
 * Stream-consuming partitions (docs/streaming-and-kv.md): a streamed token is registered in its buffer in signal order
 * and read into it; an idle partition's buffer is cut into chunks by its policy, each chunk joined into one tensor
 * that starts a pass of the partition's walk; a removed request's buffers hand back what they hold, each tensor once.
 * Owned by the engine loop.
 */
final class StreamPasses {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    private final OwnerThread owner;
    private final TensorLedger ledger;
    private final InputReads reads;
    private final Passes passes;
    private final RequestFailures failures;
    private long forgottenReads;

    StreamPasses(OwnerThread owner, TensorLedger ledger, InputReads reads, Passes passes, RequestFailures failures) {
        this.owner = owner;
        this.ledger = ledger;
        this.reads = reads;
        this.passes = passes;
        this.failures = failures;
    }

    /** Registers a streamed token in arrival order of the signals and reads it into {@code stream}. */
    void take(WorkerRequest request, ConsumedStream stream, TensorPointerInfo d) {
        owner.check();
        stream.buffer.register(d.uuid());
        reads.fetch(request, d, uuid -> landed(stream, d, uuid));
    }

    /** A streamed token's read landed: the buffer takes the local copy's one reference, or it is dropped now. */
    private void landed(ConsumedStream stream, TensorPointerInfo d, long uuid) {
        try {
            stream.landed(d.uuid(), uuid, ledger.info(uuid).dtype());
        } catch (RuntimeException e) {
            ledger.release(uuid, 1);
            throw e;
        }
    }

    /**
     * Cuts stream chunks for idle partitions; each chunk starts a pass of the partition's walk. A chunk that cannot
     * be cut or started fails its request only.
     */
    void poll(Iterable<WorkerRequest> requests) {
        owner.check();
        for (WorkerRequest request : requests) {
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
                    failures.fatal(e);
                    return;
                }
                failures.fail(request, WorkerErrorType.DEVICE_ERROR, "cutting a stream chunk failed: " + e.getMessage());
            } catch (RuntimeException e) {
                log.warn("request {}: cutting a stream chunk failed: {}", request.requestId, e.toString(), e);
                failures.fail(request, e);
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
        passes.start(request, partition, partition.info);
        PartitionPass pass = partition.pass;
        NodeState consumer = pass == null ? null : pass.nodes.values().stream()
                .filter(n -> n.node.consumesStream() && n.node.inputNames().contains(edge)).findFirst().orElse(null);
        if (consumer == null) {
            ledger.release(uuid, 1);
            throw new EngineException(EngineException.Reason.BAD_MESSAGE, "no node of walk "
                    + partition.info.graphWalk() + " consumes stream '" + edge + "' here");
        }
        pass.finalStreamChunk = chunk.isFinal();
        passes.ingest(request, partition, pass, consumer, edge, uuid);
    }

    /**
     * Hands back what the request's stream buffers still hold, each tensor once. A token whose read has not landed
     * needs nothing: its landing finds the request gone and drops the bytes unstored ({@link InputReads#fetch}).
     */
    void close(WorkerRequest request) {
        owner.check();
        for (PartitionState partition : request.partitions.values()) {
            for (ConsumedStream stream : partition.streams.values()) {
                try {
                    StreamRelease<Long> rest = stream.buffer.close();
                    rest.released().forEach(entry -> ledger.release(entry.tensor(), 1));
                    forgottenReads += rest.unlanded().size();
                } catch (RuntimeException e) {
                    log.error("request {}: closing stream '{}' failed: {}", request.requestId, partition.name,
                            e.toString(), e);
                }
            }
        }
    }

    /** Streamed tokens whose reads had not landed when their request was removed (dropped when they land). */
    long forgottenReads() {
        return forgottenReads;
    }
}
