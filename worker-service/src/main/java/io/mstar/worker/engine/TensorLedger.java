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

    /**
     * Received tensors up to this size keep their bytes as a host copy too: a stream's tokens, read by a kernel or
     * joined into a chunk on the host, then cost no device round trip. Larger ones (hidden states) do not double.
     */
    static final int RECEIVED_HOST_COPY_LIMIT = 64 << 10;

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
        data.store().putTensor(requestId, uuid, buffer, info, tensor.host());
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
        data.store().putTensor(requestId, uuid, buffer, info, hostCopy(bytes, source.nbytes()));
        data.store().incrementRef(uuid, 1);
        return uuid;
    }

    private static ByteBuffer hostCopy(ByteBuffer bytes, long nbytes) {
        if (nbytes > RECEIVED_HOST_COPY_LIMIT) {
            return null;
        }
        ByteBuffer copy = ByteBuffer.allocate((int) nbytes);
        copy.put(bytes.duplicate().limit(bytes.position() + (int) nbytes)).flip();
        return copy;
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
        if (data.store().canGc(uuid)) { // still held: a dereference never removes
            data.store().removeTensor(uuid);
        }
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
        return new Tensor(data.store().getTensor(uuid), info.dtype(), info.dims(), data.store().getCpuTensor(uuid));
    }

    TensorPointerInfo info(long uuid) {
        return data.store().getInfo(uuid);
    }

    /** The tensor's bytes on the host (an output small enough to travel inline): its host copy, or a read. */
    byte[] hostBytes(long uuid) {
        int nbytes = Math.toIntExact(info(uuid).nbytes());
        byte[] bytes = new byte[nbytes];
        hostView(uuid, nbytes).get(0, bytes);
        return bytes;
    }

    /** The tensor's {@code nbytes} bytes from its host copy, or read from the device into a fresh buffer. */
    private ByteBuffer hostView(long uuid, int nbytes) {
        ByteBuffer cpu = data.store().getCpuTensor(uuid);
        if (cpu != null) {
            return cpu;
        }
        ByteBuffer staging = ByteBuffer.allocateDirect(nbytes);
        if (nbytes > 0) {
            data.device().copyToHost(data.store().getTensor(uuid), 0, staging);
        }
        return staging;
    }

    /**
     * Concatenates tensors along their first dimension into a fresh one (a stream chunk); empty for none. The parts
     * come from their host copies where they have them, and the chunk keeps the joined bytes as its own.
     */
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
        ByteBuffer staging = ByteBuffer.allocateDirect((int) total);
        try {
            for (long uuid : uuids) {
                int nbytes = (int) info(uuid).nbytes();
                ByteBuffer cpu = data.store().getCpuTensor(uuid);
                if (cpu != null) {
                    staging.put(cpu);
                } else {
                    ByteBuffer part = staging.slice(staging.position(), nbytes);
                    if (nbytes > 0) {
                        data.device().copyToHost(data.store().getTensor(uuid), 0, part);
                    }
                    staging.position(staging.position() + nbytes);
                }
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
        return new Tensor(out, dtype, dims, total <= RECEIVED_HOST_COPY_LIMIT ? staging : null);
    }

    long unknownReleases() {
        return unknownReleases;
    }
}
