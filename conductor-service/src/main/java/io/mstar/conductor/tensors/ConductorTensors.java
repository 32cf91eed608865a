package io.mstar.conductor.tensors;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.ReadResult;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorReader;

/**
 * The conductor's tensors (docs/architecture.md#a-requests-life, step 2; docs/architecture.md#data-plane): the client's
 * inputs, stored persisted on a {@link HostDevice} under uuids of the conductor's ordinal and served to workers through
 * {@link ServedTensors} (the {@code TensorServer} on the data port serves that source); and reads of client-bound
 * outputs through a {@link TensorReader}.
 *
 * <p>Owned by the lifecycle loop: the store binds to it on first use. Input tensors live until their request is
 * removed ({@link #removeRequest}); workers' acks of them are not counted (they cannot reach the conductor's topic,
 * and nothing is freed before removal anyway). A removal releases the served entry, which frees the host buffer at
 * once or at the last unpin of a server read still sending it. Nothing here is closed: the device, the served
 * source and the reader belong to whoever created them.
 */
public final class ConductorTensors {

    private final HostDevice device;
    private final ServedTensors served;
    private final TensorReader reader;
    private final TensorUuids uuids;
    private final String sessionId;
    private final int inlineInputMaxBytes;
    private final TensorStore store;

    /**
     * @param sessionId           where the conductor's tensor server listens ({@code host:port}), stamped on
     *                            descriptors
     * @param inlineInputMaxBytes inputs this small travel inside the messages that hand them out ({@link #inlineData})
     */
    public ConductorTensors(HostDevice device, ServedTensors served, TensorReader reader, TensorUuids uuids,
            String sessionId, int inlineInputMaxBytes) {
        this.device = device;
        this.served = served;
        this.reader = reader;
        this.uuids = uuids;
        this.sessionId = sessionId;
        this.inlineInputMaxBytes = inlineInputMaxBytes;
        // Removal hands the buffer to the served entry's release; its onFree (set at publish) frees the buffer.
        this.store = new TensorStore(new PlainTensorBookkeeping(), (uuid, buffer) -> served.release(uuid));
    }

    /**
     * Stores {@code data} (little-endian, contiguous) as a persisted input of {@code requestId} and publishes it;
     * answers its descriptor.
     */
    public TensorPointerInfo storeInput(String requestId, String dtype, List<Long> dims, byte[] data) {
        long uuid = uuids.next();
        HostBuffer buffer = device.allocate(data.length);
        TensorPointerInfo info;
        try {
            buffer.bytes().put(data);
            info = new TensorPointerInfo(uuid, dims, contiguousStride(dims), dtype, data.length, buffer.address(),
                    sessionId, EntityId.CONDUCTOR.value());
            // The served entry now owns the buffer's free; the store owns the uuid's lifetime.
            served.publish(uuid, buffer.bytes(), () -> device.free(buffer));
        } catch (RuntimeException e) {
            device.free(buffer);
            throw e;
        }
        store.putTensor(requestId, uuid, buffer, info, null);
        store.setMetadata(uuid, true, true);
        return info;
    }

    /**
     * The {@code inline_data} of a message handing out {@code edges}: each descriptor's bytes, base64, when every one
     * is an input stored here of at most {@code inline-input-max-bytes}; else none, and the receiver reads them all.
     * The inputs stay stored and served either way (a later pass may hand them out again).
     */
    public List<String> inlineData(List<GraphEdge> edges) {
        List<String> inline = new ArrayList<>();
        for (GraphEdge edge : edges) {
            for (TensorPointerInfo d : edge.tensorInfo()) {
                if (d.nbytes() > inlineInputMaxBytes || !d.sourceEntity().equals(EntityId.CONDUCTOR.value())
                        || !store.checkUuidPresence(d.uuid())) {
                    return List.of();
                }
                byte[] bytes = new byte[(int) d.nbytes()];
                ((HostBuffer) store.getTensor(d.uuid())).bytes().get(0, bytes);
                inline.add(Base64.getEncoder().encodeToString(bytes));
            }
        }
        return inline;
    }

    /** Frees every input of {@code requestId}; returns how many. Idempotent. */
    public int removeRequest(String requestId) {
        return store.removeRequest(requestId);
    }

    /** Starts reading an output the descriptor names; completes off the loop. */
    public CompletableFuture<ReadResult> read(String requestId, TensorPointerInfo info, ByteBuffer destination) {
        return reader.read(requestId, info, destination);
    }

    /** Stops tracking reads of a removed request. */
    public void forgetReads(String requestId) {
        reader.forget(requestId);
    }

    /** Input tensors held, over all requests. */
    public int liveTensors() {
        return store.liveTensorCount();
    }

    /** Served entries still holding memory (published, or released while a read pins them). */
    public int servedLive() {
        return served.live();
    }

    /** Host bytes in use by the conductor's device. */
    public long deviceBytesInUse() {
        return device.stats().bytesInUse();
    }

    static List<Long> contiguousStride(List<Long> dims) {
        List<Long> stride = new ArrayList<>(dims.size());
        long s = 1;
        for (int i = dims.size() - 1; i >= 0; i--) {
            stride.add(0, s);
            s *= dims.get(i);
        }
        return stride;
    }
}
