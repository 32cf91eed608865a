package io.mstar.tensor;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.bookkeeping.Collectable;
import io.mstar.tensor.bookkeeping.ColumnarTensorInfo;
import io.mstar.tensor.bookkeeping.ReferenceInfo;
import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import io.mstar.tensor.bookkeeping.TensorStoreException.Reason;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * The tensors themselves, plus which request owns each one (docs/architecture.md#tensor-lifetime).
 *
 * <p>Holds each tensor's {@link DeviceBuffer} and an optional host copy, and the one request-keyed map
 * (request → uuids), which exists only so a request teardown can find what to free: uuids are globally unique
 * ({@link TensorUuids}), so nothing else is keyed by request. Reference state – counts, persist, registration,
 * the descriptor – lives in the {@link TensorBookkeeping}; the delegating methods here exist so callers have one
 * object to talk to.
 *
 * <p><b>Ownership.</b> A buffer handed to a put belongs to the store from then on: the caller keeps no handle it
 * may free, and the store frees it exactly once – through its {@link TensorRelease} – in {@link #removeTensor},
 * {@link #removeRequest} or {@link #removeAll}. A host copy is kept as a slice of what was given (later moves of
 * the giver's position do not matter); {@link #getCpuTensor} answers independent views of it.
 *
 * <p><b>Forgotten records.</b> A batched dereference with {@code cleanup} drops the collectable records in the
 * bookkeeper in the same call, but the tensors stay here until the caller removes them; {@link #markForgotten}
 * (done automatically by this store's own {@link #dereferenceBatch} with cleanup) records that, so the removal
 * does not ask the bookkeeper to drop them a second time.
 *
 * <p><b>Errors.</b> A uuid the store does not hold, a uuid put twice, or a malformed batch is a
 * {@link TensorStoreException} with the uuid and a reason, counted in {@link #errorCounts()} – never a silent
 * return (docs/architecture.md#explicit-handover-of-tensors). Errors the bookkeeper raises are counted by the
 * bookkeeper. Puts are validated before anything is written, so a refused put changes nothing.
 *
 * <p>Owned by the engine loop; not thread-safe. The store binds to the first thread that calls it (or to the
 * one given to {@link #confineTo}) and every method fails with {@link IllegalStateException} on another one.
 * Other threads go through {@link BookkeepingService}.
 */
public final class TensorStore {

    /** One stored tensor. */
    private static final class Stored {
        final String requestId;
        final DeviceBuffer buffer;
        final ByteBuffer cpu;

        Stored(String requestId, DeviceBuffer buffer, ByteBuffer cpu) {
            this.requestId = requestId;
            this.buffer = buffer;
            this.cpu = cpu;
        }
    }

    private final TensorBookkeeping bookkeeping;
    private final TensorRelease release;
    private final Long2ObjectHashMap<Stored> tensors = LongKeys.map();
    private final Map<String, LongHashSet> requestUuids = new HashMap<>();
    /** Uuids held here whose bookkeeper record is already gone; drained by removal. */
    private final LongHashSet forgotten = LongKeys.set();
    private final long[] errors = new long[Reason.values().length];
    private volatile Thread owner;

    /** A store that frees removed buffers on their device at once ({@link TensorRelease#FREE_NOW}). */
    public TensorStore(TensorBookkeeping bookkeeping) {
        this(bookkeeping, TensorRelease.FREE_NOW);
    }

    /** @param release takes each removed buffer, exactly once (e.g. deferring the free while a read pins it) */
    public TensorStore(TensorBookkeeping bookkeeping, TensorRelease release) {
        this.bookkeeping = Objects.requireNonNull(bookkeeping, "bookkeeping");
        this.release = Objects.requireNonNull(release, "release");
    }

    /** Binds the store to {@code thread} (the engine loop) before first use. */
    public void confineTo(Thread thread) {
        if (owner != null && owner != thread) {
            throw new IllegalStateException("TensorStore already owned by " + owner.getName());
        }
        owner = thread;
    }

    public TensorBookkeeping bookkeeping() {
        return bookkeeping;
    }

    // ---- puts ----

    /**
     * Stores {@code tensor} for {@code requestId} and gives the bookkeeper a fresh record for {@code info}.
     *
     * @param cpuTensor a host copy kept alongside, or null
     */
    public void putTensor(String requestId, long uuid, DeviceBuffer tensor, TensorPointerInfo info,
                          ByteBuffer cpuTensor) {
        checkOwner();
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(tensor, "tensor");
        if (tensors.containsKey(uuid)) {
            throw raise(Reason.DUPLICATE_UUID, uuid, "put_tensor", "already stored");
        }
        bookkeeping.putTensor(uuid, info); // refuses a mismatched descriptor before anything is written here
        store(requestId, uuid, tensor, cpuTensor);
    }

    /**
     * A put spanning requests: one bookkeeping call for a whole output batch rather than one per request.
     * Lists are parallel; {@code cpuTensors} may be null (no host copies) or hold nulls.
     */
    public void putTensorBatchMulti(List<String> requestIds, long[] uuids, List<? extends DeviceBuffer> tensors,
                                    List<TensorPointerInfo> infos, List<ByteBuffer> cpuTensors) {
        checkOwner();
        validateBatch("put_tensor_batch_multi", requestIds, uuids, tensors, infos.size(), cpuTensors);
        bookkeeping.putTensorBatch(uuids, infos);
        storeBatch(requestIds, uuids, tensors, cpuTensors);
    }

    /**
     * {@link #putTensorBatchMulti} from the columns the caller filled while minting. {@code columns.uuids()} is in
     * the order of {@code tensors}, which is what keeps the ownership maps aligned. A bookkeeper that declines
     * columns gets the same rows as descriptors.
     */
    public void putTensorBatchColumns(List<String> requestIds, List<? extends DeviceBuffer> tensors,
                                      ColumnarTensorInfo columns, List<ByteBuffer> cpuTensors) {
        checkOwner();
        long[] uuids = columns.uuids();
        validateBatch("put_tensor_batch_columns", requestIds, uuids, tensors, uuids.length, cpuTensors);
        if (!bookkeeping.putTensorBatchColumns(columns)) {
            bookkeeping.putTensorBatch(uuids, columns.toPointerInfos());
        }
        storeBatch(requestIds, uuids, tensors, cpuTensors);
    }

    /** Whether the caller should marshal into {@link ColumnarTensorInfo}; asked before minting. */
    public boolean hasPutTensorBatchColumns() {
        checkOwner();
        return bookkeeping.hasPutTensorBatchColumns();
    }

    // ---- lookups ----

    /** The tensor's buffer; still owned by the store. */
    public DeviceBuffer getTensor(long uuid) {
        checkOwner();
        return stored(uuid, "get_tensor").buffer;
    }

    /** A view of the host copy stored alongside {@code uuid}, or null if the producer gave none. */
    public ByteBuffer getCpuTensor(long uuid) {
        checkOwner();
        ByteBuffer cpu = stored(uuid, "get_cpu_tensor").cpu;
        return cpu == null ? null : cpu.duplicate();
    }

    /** The descriptor, or null when the bookkeeper has no record (a lookup, not an error). */
    public TensorPointerInfo getInfo(long uuid) {
        checkOwner();
        return bookkeeping.getInfo(uuid);
    }

    /** The uuids {@code requestId} still holds here, ascending; empty for a request with none. */
    public List<Long> getAllUuids(String requestId) {
        checkOwner();
        return Arrays.stream(uuidsOf(requestId)).boxed().toList();
    }

    /** Whether the store holds a tensor for {@code uuid}. Never an error. */
    public boolean checkUuidPresence(long uuid) {
        checkOwner();
        return tensors.containsKey(uuid);
    }

    // ---- removal ----

    /**
     * Frees the tensor's buffer (exactly once: the store forgets it before handing it to its
     * {@link TensorRelease}) and drops its host copy,
     * request entry and bookkeeper record – unless that record was already forgotten ({@link #markForgotten}).
     *
     * @throws TensorStoreException UNKNOWN_UUID if the store does not hold it (a double remove, say); or, from the
     *         bookkeeper, if its record is gone without having been marked forgotten – the buffer is freed and
     *         the store consistent even then, the error reports the caller's bookkeeping bug
     */
    public void removeTensor(long uuid) {
        checkOwner();
        Stored stored = tensors.remove(uuid);
        if (stored == null) {
            throw raise(Reason.UNKNOWN_UUID, uuid, "remove_tensor", "not stored (removed twice?)");
        }
        LongHashSet ofRequest = requestUuids.get(stored.requestId);
        ofRequest.remove(uuid);
        if (ofRequest.isEmpty()) {
            requestUuids.remove(stored.requestId);
        }
        boolean recordGone = forgotten.remove(uuid);
        try {
            // The store no longer refers to the buffer: from here it is the release's to free, exactly once.
            release.release(uuid, stored.buffer);
        } finally {
            if (!recordGone) {
                bookkeeping.forgetTensor(uuid);
            }
        }
    }

    /**
     * Request teardown: removes every tensor {@code requestId} still holds, and nothing else. Keeps going past a
     * failing removal so one bad record cannot leak the rest; the first failure is thrown at the end with the
     * others suppressed. Idempotent: a request with nothing left removes nothing.
     *
     * @return how many tensors were removed
     */
    public int removeRequest(String requestId) {
        checkOwner();
        return removeEach(uuidsOf(requestId));
    }

    /**
     * Shutdown: removes every tensor held, whichever request owns it. The engine loop calls this as it stops
     * (docs/architecture.md#the-owner-releases); failures are handled as in {@link #removeRequest}.
     *
     * @return how many tensors were removed
     */
    public int removeAll() {
        checkOwner();
        long[] all = new long[tensors.size()];
        int i = 0;
        for (Long2ObjectHashMap<Stored>.KeyIterator it = tensors.keySet().iterator(); it.hasNext(); ) {
            all[i++] = it.nextLong();
        }
        return removeEach(all);
    }

    /** The request's uuids, ascending (a deterministic teardown order), copied so removal may go on meanwhile. */
    private long[] uuidsOf(String requestId) {
        LongHashSet uuids = requestUuids.get(requestId);
        if (uuids == null) {
            return new long[0];
        }
        long[] out = new long[uuids.size()];
        int i = 0;
        for (LongHashSet.LongIterator it = uuids.iterator(); it.hasNext(); ) {
            out[i++] = it.nextValue();
        }
        Arrays.sort(out);
        return out;
    }

    /** Keeps going past a failing removal; the first failure is thrown at the end with the others suppressed. */
    private int removeEach(long[] uuids) {
        RuntimeException failure = null;
        int removed = 0;
        for (long uuid : uuids) {
            try {
                removeTensor(uuid);
                removed++;
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return removed;
    }

    /**
     * These records are already gone from the bookkeeper, so the removal that follows must not drop them again.
     * For a caller that went to the bookkeeper directly. Validated first, nothing marked on a refusal: every uuid
     * must be held here, and its record gone from the bookkeeper (a live record marked forgotten would be left
     * behind by the removal).
     */
    public void markForgotten(long[] uuids) {
        checkOwner();
        for (long uuid : uuids) {
            if (!tensors.containsKey(uuid)) {
                throw raise(Reason.UNKNOWN_UUID, uuid, "mark_forgotten", "not stored");
            }
            if (bookkeeping.contains(uuid)) {
                throw raise(Reason.RECORD_STILL_LIVE, uuid, "mark_forgotten", "the bookkeeper still holds its record");
            }
        }
        for (long uuid : uuids) {
            forgotten.add(uuid);
        }
    }

    // ---- reference state (delegated) ----

    /**
     * Sets whichever flags are non-null. An unknown uuid is refused by the first setter, before anything is set
     * (both name the same record), and counted by the bookkeeper.
     */
    public void setMetadata(long uuid, Boolean persist, Boolean memRegistered) {
        checkOwner();
        if (persist != null) {
            bookkeeping.setPersist(uuid, persist);
        }
        if (memRegistered != null) {
            bookkeeping.setMemRegistered(uuid, memRegistered);
        }
    }

    public boolean canGc(long uuid) {
        checkOwner();
        return bookkeeping.canGc(uuid);
    }

    public void dereference(long uuid, int n) {
        checkOwner();
        bookkeeping.dereference(uuid, n);
    }

    /**
     * Drops {@code counts[i]} references from {@code uuids[i]}; the uuids that became collectable, and whether
     * each was registered. With {@code cleanup} the bookkeeper forgets them in the same call and this store marks
     * the ones it holds as forgotten; the caller still removes the tensors.
     */
    public Collectable dereferenceBatch(long[] uuids, int[] counts, boolean cleanup) {
        checkOwner();
        return afterDereference(bookkeeping.dereferenceBatch(uuids, counts, cleanup), cleanup);
    }

    /** {@link #dereferenceBatch} where every uuid drops {@code n}. */
    public Collectable dereferenceBatchUniform(long[] uuids, int n, boolean cleanup) {
        checkOwner();
        return afterDereference(bookkeeping.dereferenceBatchUniform(uuids, n, cleanup), cleanup);
    }

    public void incrementRef(long uuid, int n) {
        checkOwner();
        bookkeeping.incrementRef(uuid, n);
    }

    public void incrementRefBatch(long[] uuids, int[] counts) {
        checkOwner();
        bookkeeping.incrementRefBatch(uuids, counts);
    }

    public void incrementRefBatchUniform(long[] uuids, int n) {
        checkOwner();
        bookkeeping.incrementRefBatchUniform(uuids, n);
    }

    public boolean isRegistered(long uuid) {
        checkOwner();
        return bookkeeping.isRegistered(uuid);
    }

    public void registerShmSegment(int index, String name) {
        checkOwner();
        bookkeeping.registerShmSegment(index, name);
    }

    public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
        checkOwner();
        bookkeeping.setShmPlacement(uuids, segmentIdxs, offsets);
    }

    // ---- introspection: leak checks and the metrics snapshot ----

    /** Tensors held now; back to the baseline after a teardown, or something leaked. */
    public int liveTensorCount() {
        checkOwner();
        return tensors.size();
    }

    /** Bytes of the buffers held, by device name (sorted). */
    public Map<String, Long> bytesByDevice() {
        checkOwner();
        return census().bytesByDevice();
    }

    /** Bytes of the host copies held. */
    public long hostCopyBytes() {
        checkOwner();
        return census().hostCopyBytes;
    }

    /** Requests that still hold a tensor here. */
    public int requestCount() {
        checkOwner();
        return requestUuids.size();
    }

    /** Refusals raised by the store itself (the bookkeeper counts its own), by reason. */
    public Map<Reason, Long> errorCounts() {
        checkOwner();
        Map<Reason, Long> out = new EnumMap<>(Reason.class);
        for (Reason r : Reason.values()) {
            out.put(r, errors[r.ordinal()]);
        }
        return out;
    }

    /**
     * What the metrics report, computed here on the owner and handed to other threads as an immutable value.
     * Linear in the tensors held, so the owner publishes it at its own pace, not per operation.
     */
    public TensorStoreSnapshot snapshot() {
        checkOwner();
        StoreCensus census = census();
        Map<Reason, Long> allErrors = errorCounts();
        bookkeeping.errors().snapshot().forEach((r, n) -> allErrors.merge(r, n, Long::sum));
        return new TensorStoreSnapshot(tensors.size(), census.owned, census.awaitingAck, census.persisted,
                census.bytesByDevice(), census.hostCopyBytes, allErrors);
    }

    /** One walk over the tensors held (a busy worker holds tens of thousands): their states and their bytes. */
    private StoreCensus census() {
        StoreCensus census = new StoreCensus();
        tensors.forEachLong((uuid, s) -> census.count(TensorState.of(forgotten.contains(uuid)
                || !bookkeeping.contains(uuid) ? null : bookkeeping.referenceInfo(uuid)), s.buffer, s.cpu));
        return census;
    }

    // ---- internals ----

    private Collectable afterDereference(Collectable collectable, boolean cleanup) {
        if (cleanup) {
            for (long uuid : collectable.uuids()) {
                // A record without a tensor here (none in this runtime today) has nothing left to tear down.
                if (tensors.containsKey(uuid)) {
                    forgotten.add(uuid);
                }
            }
        }
        return collectable;
    }

    private void validateBatch(String op, List<String> requestIds, long[] uuids, List<? extends DeviceBuffer> bufs,
                               int infos, List<ByteBuffer> cpuTensors) {
        int n = uuids.length;
        if (requestIds.size() != n || bufs.size() != n || infos != n || (cpuTensors != null && cpuTensors.size() != n)) {
            throw raise(Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, op, "parallel lists differ in length: "
                    + requestIds.size() + " request ids, " + n + " uuids, " + bufs.size() + " tensors, " + infos
                    + " descriptors" + (cpuTensors == null ? "" : ", " + cpuTensors.size() + " host copies"));
        }
        LongHashSet seen = LongKeys.set();
        for (int i = 0; i < n; i++) {
            if (tensors.containsKey(uuids[i]) || !seen.add(uuids[i])) {
                throw raise(Reason.DUPLICATE_UUID, uuids[i], op, "already stored or repeated in the batch");
            }
            if (requestIds.get(i) == null || bufs.get(i) == null) {
                throw raise(Reason.INVALID_ARGUMENT, uuids[i], op, "null request id or tensor");
            }
        }
    }

    private void storeBatch(List<String> requestIds, long[] uuids, List<? extends DeviceBuffer> bufs,
                            List<ByteBuffer> cpuTensors) {
        for (int i = 0; i < uuids.length; i++) {
            store(requestIds.get(i), uuids[i], bufs.get(i), cpuTensors == null ? null : cpuTensors.get(i));
        }
    }

    private void store(String requestId, long uuid, DeviceBuffer buffer, ByteBuffer cpu) {
        tensors.put(uuid, new Stored(requestId, buffer, cpu == null ? null : cpu.slice()));
        requestUuids.computeIfAbsent(requestId, r -> LongKeys.set()).add(uuid);
    }

    private Stored stored(long uuid, String op) {
        Stored s = tensors.get(uuid);
        if (s == null) {
            throw raise(Reason.UNKNOWN_UUID, uuid, op, "not stored");
        }
        return s;
    }

    private TensorStoreException raise(Reason reason, long uuid, String op, String message) {
        errors[reason.ordinal()]++;
        return new TensorStoreException(reason, uuid, op, message);
    }

    private void checkOwner() {
        Thread current = Thread.currentThread();
        Thread o = owner;
        if (o != current) {
            if (o != null) {
                throw new IllegalStateException("TensorStore is owned by " + o.getName() + ", called from "
                        + current.getName());
            }
            owner = current;
        }
    }
}
