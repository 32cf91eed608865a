package io.mstar.conductor.lifecycle;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import io.mstar.conductor.output.TensorRendering;
import io.mstar.conductor.tensors.ConductorTensors;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.TensorAcks;
import io.mstar.wire.RequestOutcome;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.TensorReceived;
import reactor.core.publisher.Sinks;

/**
 * A request's outputs on their way to its client (docs/request-flow.md): reads each {@link ResultTensors} tensor from
 * the worker that holds it and acknowledges it with {@link TensorReceived} (one per request and producer per loop
 * turn, {@link TensorAcks}), or takes its bytes from the message when they came inline; renders it, and emits chunks
 * to the client's stream in each signal's loop order, timing the first and the following chunks.
 *
 * <p>Owned by the lifecycle loop, like the {@link RequestLifecycle} that calls it and the {@link ActiveRequest}s it
 * writes: every method runs there, so nothing is locked. Reads complete on transport threads and come back through
 * {@code toLoop}; what a completed read does to the request's state goes to the {@link RequestCallbacks}.
 */
final class OutputDelivery {

    // The category the lifecycle logged under before delivery had its own class; log filters on it keep matching.
    private static final Logger log = LoggerFactory.getLogger(RequestLifecycle.class);

    private final WorkerOutbox outbox;
    private final ConductorTensors tensors;
    private final RequestMeters meters;
    private final Consumer<Runnable> toLoop;
    private final RequestCallbacks requests;
    private final TensorAcks acks = new TensorAcks();

    OutputDelivery(WorkerOutbox outbox, ConductorTensors tensors, RequestMeters meters, Consumer<Runnable> toLoop,
            RequestCallbacks requests) {
        this.outbox = outbox;
        this.tensors = tensors;
        this.meters = meters;
        this.toLoop = toLoop;
        this.requests = requests;
    }

    /**
     * Outputs for a request that is not running: nobody will read them, so they are acknowledged unread and the
     * producer's counts still reach zero. Inline outputs have nothing to acknowledge.
     */
    void acknowledgeUnread(ResultTensors result) {
        if (result.inline()) {
            return;
        }
        for (TensorPointerInfo d : result.graphEdge().tensorInfo()) {
            acks.landed(result.requestId(), EntityId.parse(d.sourceEntity()), d.uuid());
        }
    }

    /** Outputs for a running request: queued in their signal's loop order, and read. */
    void receive(ActiveRequest request, ResultTensors result) {
        List<TensorPointerInfo> descriptors = result.graphEdge().tensorInfo();
        ActiveRequest.PendingOutput output = new ActiveRequest.PendingOutput(result.graphEdge().name(), result.modality(),
                result.loopIndices(), request.arrivals++, result.metadata(), descriptors);
        List<ActiveRequest.PendingOutput> pending = request.pendingBySignal.computeIfAbsent(output.signal, s -> new ArrayList<>());
        int at = 0;
        while (at < pending.size() && ActiveRequest.LOOP_ORDER.compare(pending.get(at), output) <= 0) {
            at++;
        }
        pending.add(at, output);
        for (int i = 0; i < descriptors.size(); i++) {
            if (result.inline()) {
                if (!landInline(request, output, i, result.inlineData().get(i))) {
                    return;
                }
            } else {
                startRead(request, output, i);
            }
        }
        deliverReady(request, output.signal);
        requests.maybeFinish(request);
    }

    /**
     * An output whose bytes came in its message: nothing to read, and nothing to acknowledge, since its producer kept
     * no copy. Bytes that do not match their descriptor fail the request, as a failed read would.
     */
    private boolean landInline(ActiveRequest request, ActiveRequest.PendingOutput output, int index, String base64) {
        TensorPointerInfo d = output.tensors.get(index);
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            bytes = null;
        }
        if (bytes == null || bytes.length != d.nbytes()) {
            requests.fail(request, ErrorType.OUTPUT_READ_FAILED, "output '" + output.signal + "' tensor " + d.uuid()
                    + " from " + d.sourceEntity() + " came with " + (bytes == null ? "malformed base64" : bytes.length
                    + " bytes") + " for its " + d.nbytes());
            return false;
        }
        output.data.set(index, TensorRendering.render(d.dtype(), ByteBuffer.wrap(bytes)));
        output.readsLeft--;
        return true;
    }

    /** Sends the acknowledgements owed since the last flush: the loop calls this when its turn ends. */
    void flushAcks() {
        acks.flush(outbox::send);
    }

    /** Sends what {@code requestId} owes now, so its acks go out ahead of its {@code RemoveRequest}. */
    void flushAcks(String requestId) {
        acks.flush(requestId, outbox::send);
    }

    /**
     * Answers the client with {@code request}'s terminal chunk, for the outcome just fixed, and ends its stream.
     * Outputs not yet delivered will never be: the conductor drains itself by waiting for its reads only.
     */
    void endStream(ActiveRequest request) {
        Chunk terminal;
        if (request.outcome == RequestOutcome.COMPLETED) {
            terminal = Chunk.done();
        } else if (request.outcome == RequestOutcome.FAILED) {
            terminal = Chunk.error(new Chunk.ChunkError(request.errorType.value(), request.errorType.status(), request.detail));
        } else {
            terminal = Chunk.aborted(request.abortReason.value(),
                    new Chunk.ChunkError(request.errorType.value(), request.errorType.status(), request.detail));
        }
        emitted(request, "terminal chunk", request.sink.tryEmitNext(terminal));
        emitted(request, "end of stream", request.sink.tryEmitComplete());
        request.pendingBySignal.clear();
    }

    private void startRead(ActiveRequest request, ActiveRequest.PendingOutput output, int index) {
        TensorPointerInfo d = output.tensors.get(index);
        ByteBuffer destination = ByteBuffer.allocate(Math.toIntExact(d.nbytes()));
        request.readsInFlight++;
        tensors.read(request.id(), d, destination).whenComplete((r, error) ->
                toLoop.accept(() -> onReadDone(request, output, index, destination, error)));
    }

    private void onReadDone(ActiveRequest reader, ActiveRequest.PendingOutput output, int index, ByteBuffer bytes,
            Throwable error) {
        TensorPointerInfo d = output.tensors.get(index);
        EntityId producer = EntityId.parse(d.sourceEntity());
        String requestId = reader.id();
        // The request may have been removed while the read was in flight (a drain timeout), and its id taken by a
        // new request, which this read is no part of: only the same request counts.
        ActiveRequest request = requests.live(reader) ? reader : null;
        if (error == null) {
            acks.landed(requestId, producer, d.uuid());
        } else {
            acks.failed(requestId, producer, d.uuid());
        }
        if (request == null) {
            return;
        }
        request.readsInFlight--;
        if (request.state == RequestState.RUNNING) {
            if (error != null) {
                requests.fail(request, ErrorType.OUTPUT_READ_FAILED, "reading output '" + output.signal + "' tensor "
                        + d.uuid() + " from " + d.sourceEntity() + " failed: " + error);
                return;
            }
            output.data.set(index, TensorRendering.render(d.dtype(), bytes));
            output.readsLeft--;
            deliverReady(request, output.signal);
            requests.maybeFinish(request);
        } else if (request.state == RequestState.DRAINING) {
            requests.maybeRemove(request);
        }
    }

    /** Delivers the signal's outputs from the head of its loop order while they are read. */
    private void deliverReady(ActiveRequest request, String signal) {
        List<ActiveRequest.PendingOutput> pending = request.pendingBySignal.get(signal);
        while (!pending.isEmpty() && pending.get(0).readsLeft == 0) {
            ActiveRequest.PendingOutput out = pending.remove(0);
            Map<String, Object> metadata = new LinkedHashMap<>(out.metadata);
            metadata.putAll(request.policy.chunkMetadata(out.modality, out.signal));
            TensorPointerInfo first = out.tensors.isEmpty() ? null : out.tensors.get(0);
            String dtype = first == null ? "" : first.dtype();
            metadata.put("dtype", dtype);
            metadata.put("shape", first == null ? List.of() : first.dims());
            metadata.put("encoding", TensorRendering.encoding(dtype));
            metadata.put("loop_indices", out.loopIndices.loopIndices());
            metadata.put("fwd_pass_index", out.loopIndices.wgFwdPassIdx());
            Object data = out.data.size() == 1 ? out.data.get(0) : out.data;
            emitted(request, "output chunk", request.sink.tryEmitNext(Chunk.output(out.modality, out.signal, data, metadata)));
            long now = System.nanoTime();
            if (request.chunksDelivered == 0) {
                meters.firstChunk(request.submission.model(), Duration.ofNanos(now - request.submittedNanos));
            } else {
                meters.interChunk(request.submission.model(), Duration.ofNanos(now - request.lastChunkNanos));
            }
            request.lastChunkNanos = now;
            request.chunksDelivered++;
        }
    }

    /**
     * A client that went away cancels its stream, so those refusals are expected; any other would leave a client
     * without its chunks, and is logged with its reason.
     */
    private static void emitted(ActiveRequest request, String what, Sinks.EmitResult result) {
        if (result.isFailure() && result != Sinks.EmitResult.FAIL_CANCELLED) {
            log.warn("request {}: the {} could not be handed to its client stream: {}", request.id(), what, result);
        }
    }
}
