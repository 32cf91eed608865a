package io.mstar.worker.engine;

import java.nio.ByteBuffer;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kernel.Tensor;

/**
 * The engine's use of the tensor store (docs/architecture.md#tensor-lifetime): stores outputs and received copies under
 * fresh uuids, takes and drops references, frees a tensor the moment it becomes collectable, and publishes a tensor
 * before its descriptor leaves the process. Owned by the engine loop.
 */
final class TensorLedger {

    private static final Logger log = LoggerFactory.getLogger(TensorLedger.class);

    private final DataPlane data;
    private long unknownReleases;

    TensorLedger(DataPlane data) {
        this.data = data;
    }

    TensorStore store() {
        return data.store();
    }

    /** Stores a kernel output for {@code requestId} with the one-reference safety hold; the store owns the buffer now. */
    long storeOutput(String requestId, Tensor tensor, String node, String walk) {
        long uuid = data.uuids().next();
        DeviceBuffer buffer = tensor.buffer();
        TensorPointerInfo info = TensorPointerInfo.builder(uuid, tensor.dims(), tensor.contiguousStride(), tensor.dtype(),
                buffer.nbytes(), buffer.address(), data.sessionId(), data.self().value())
                .sourceNodeName(node).sourceGraphWalk(walk).build();
        data.store().putTensor(requestId, uuid, buffer, info, null);
        data.store().incrementRef(uuid, 1);
        return uuid;
    }

    /**
     * Stores bytes read from a producer as a local tensor holding one node reference. The copy gets its own uuid:
     * the producer's may be read twice here (two edges, two passes), and uuids name one record each.
     */
    long storeReceived(String requestId, TensorPointerInfo source, ByteBuffer bytes) {
        DeviceBuffer buffer = data.device().allocate(source.nbytes());
        try {
            if (source.nbytes() > 0) {
                data.device().copyFromHost(bytes, buffer, 0);
            }
        } catch (RuntimeException e) {
            data.device().free(buffer);
            throw e;
        }
        long uuid = data.uuids().next();
        TensorPointerInfo info = TensorPointerInfo.builder(uuid, source.dims(), source.stride(), source.dtype(),
                source.nbytes(), buffer.address(), data.sessionId(), data.self().value())
                .sourceNodeName(source.sourceNodeName()).sourceGraphWalk(source.sourceGraphWalk()).build();
        data.store().putTensor(requestId, uuid, buffer, info, null);
        data.store().incrementRef(uuid, 1);
        return uuid;
    }

    /** Stores a tensor the engine made itself (a stream chunk) holding one reference. */
    long storeMade(String requestId, Tensor tensor) {
        return storeOutput(requestId, tensor, null, null);
    }

    boolean holds(long uuid) {
        return data.store().checkUuidPresence(uuid);
    }

    void hold(long uuid, int n) {
        data.store().incrementRef(uuid, n);
    }

    /** Drops {@code n} references; frees the tensor if that made it collectable. */
    void release(long uuid, int n) {
        if (!data.store().checkUuidPresence(uuid)) {
            unknownReleases++;
            log.warn("release of tensor {} that is not held here (freed already?)", uuid);
            return;
        }
        data.store().dereference(uuid, n);
        freeIfCollectable(uuid);
    }

    void freeIfCollectable(long uuid) {
        if (data.store().checkUuidPresence(uuid) && data.store().canGc(uuid)) {
            data.store().removeTensor(uuid);
        }
    }

    /** {@code UnpersistTensors}: +n, then persist off (in that order, so a count at zero is not freed early). */
    boolean unpersist(long uuid, int n) {
        if (!data.store().checkUuidPresence(uuid)) {
            return false;
        }
        data.store().incrementRef(uuid, n);
        data.store().setMetadata(uuid, false, null);
        freeIfCollectable(uuid);
        return true;
    }

    void persist(long uuid) {
        data.store().setMetadata(uuid, true, null);
    }

    /** The descriptor to hand out; publishes the tensor first if no peer could read it yet. */
    TensorPointerInfo published(long uuid) {
        if (!data.publisher().isPublished(uuid)) {
            return data.publisher().publish(data.store(), uuid);
        }
        return data.store().getInfo(uuid);
    }

    Tensor tensor(long uuid) {
        TensorPointerInfo info = data.store().getInfo(uuid);
        return new Tensor(data.store().getTensor(uuid), info.dtype(), info.dims());
    }

    TensorPointerInfo info(long uuid) {
        return data.store().getInfo(uuid);
    }

    /** A host copy of the tensor's bytes (an output small enough to travel inline). */
    byte[] hostBytes(long uuid) {
        int nbytes = Math.toIntExact(info(uuid).nbytes());
        ByteBuffer staging = ByteBuffer.allocateDirect(nbytes);
        if (nbytes > 0) {
            data.device().copyToHost(data.store().getTensor(uuid), 0, staging);
        }
        byte[] bytes = new byte[nbytes];
        staging.get(0, bytes);
        return bytes;
    }

    /** Concatenates tensors along their first dimension into a fresh one (a stream chunk); empty for none. */
    Tensor concatenate(List<Long> uuids, String fallbackDtype) {
        long total = 0;
        long rows = 0;
        String dtype = fallbackDtype;
        List<Long> rest = List.of();
        for (long uuid : uuids) {
            TensorPointerInfo info = info(uuid);
            total += info.nbytes();
            rows += info.dims().isEmpty() ? 1 : info.dims().get(0);
            dtype = info.dtype();
            rest = info.dims().isEmpty() ? List.of() : info.dims().subList(1, info.dims().size());
        }
        DeviceBuffer out = data.device().allocate(total);
        try {
            ByteBuffer staging = ByteBuffer.allocateDirect((int) total);
            for (long uuid : uuids) {
                ByteBuffer part = staging.slice(staging.position(), (int) info(uuid).nbytes());
                if (part.remaining() > 0) {
                    data.device().copyToHost(data.store().getTensor(uuid), 0, part);
                }
                staging.position(staging.position() + part.capacity());
            }
            staging.flip();
            if (total > 0) {
                data.device().copyFromHost(staging, out, 0);
            }
        } catch (RuntimeException e) {
            data.device().free(out);
            throw e;
        }
        List<Long> dims = new java.util.ArrayList<>();
        dims.add(rows);
        dims.addAll(rest);
        return new Tensor(out, dtype, dims);
    }

    long unknownReleases() {
        return unknownReleases;
    }
}
