package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.LongKeys;

import java.util.List;

import org.agrona.collections.LongHashSet;

/**
 * Per-uuid reference state. Never sees a tensor or a request id.
 *
 * <p>{@code TensorStore} holds the tensors; this holds everything else per uuid – the reference count, the persist
 * flag, whether the memory was registered for remote reads, the descriptor ({@link #getInfo}) and its arena
 * placement – keyed by nothing but the globally unique 64-bit uuid (docs/architecture.md#entities-and-ids,
 * docs/architecture.md#tensor-lifetime).
 *
 * <p>Rules (docs/architecture.md#tensor-lifetime): a tensor is collectable when {@code refCnt <= 0} and it is not
 * persisted. Counts may dip below zero for a while (an unpersist can arrive after the acks it covers). Nothing here
 * frees anything: the caller asks ({@link #canGc}, or the answer of a batched dereference) and frees exactly once, then
 * forgets the record ({@link #forgetTensor}, or {@code cleanup} on the batched dereference).
 *
 * <p>Errors: any call that names a uuid with no record – dereferencing, incrementing, forgetting, setting a flag,
 * asking {@link #canGc} or {@link #isRegistered} – throws {@link TensorStoreException} with reason
 * {@code UNKNOWN_UUID} and is counted in {@link #errors()}; never a silent return
 * (docs/architecture.md#explicit-handover-of-tensors: a double free must not vanish). The one exception is
 * {@link #getInfo}, which answers {@code null} because "no descriptor here" is a legitimate answer to a lookup. A batch
 * is validated before anything in it is applied, so a refused batch changes nothing.
 *
 * <p>The defaults of the batched forms loop, so a backend only overrides where batching buys something. They take
 * parallel primitive arrays rather than a list of pairs: nothing is boxed per tensor.
 *
 * <p>Implementations are owned by one thread (the engine loop) and are not thread-safe.
 */
public interface TensorBookkeeping {

    /** No references left and not being persisted for the conductor. */
    boolean canGc(long uuid);

    /** Drops {@code n} references ({@code n} may be any value; a negative one adds). */
    void dereference(long uuid, int n);

    default void dereference(long uuid) {
        dereference(uuid, 1);
    }

    /**
     * Drop {@code counts[i]} references from {@code uuids[i]}, answering the gc question in the same pass.
     *
     * <p>Returns the uuids that are collectable after their decrement, in call order, and whether each was
     * registered for remote reads – the one flag a teardown still needs after {@code cleanup} has dropped the
     * record. Per uuid the caller would otherwise pay a call each for the decrement, {@link #canGc},
     * {@link #isRegistered} and {@link #forgetTensor}.
     *
     * <p>Every uuid must be known and appear once (a repeat would be ambiguous with {@code cleanup}: the second
     * would name a record the first dropped; an ack covering several reads carries a count instead). Otherwise
     * it throws before changing anything.
     */
    default Collectable dereferenceBatch(long[] uuids, int[] counts, boolean cleanup) {
        requireSameLength("dereference_batch", uuids.length, counts.length);
        requireKnownAndDistinct("dereference_batch", uuids);
        Collectable.Builder out = new Collectable.Builder();
        for (int i = 0; i < uuids.length; i++) {
            long uuid = uuids[i];
            dereference(uuid, counts[i]);
            if (canGc(uuid)) {
                out.add(uuid, isRegistered(uuid));
                if (cleanup) {
                    forgetTensor(uuid);
                }
            }
        }
        return out.build();
    }

    /**
     * {@link #dereferenceBatch} for a uniform count, which is what a node's consumed inputs and a streamed output
     * batch always are.
     */
    default Collectable dereferenceBatchUniform(long[] uuids, int n, boolean cleanup) {
        int[] counts = new int[uuids.length];
        java.util.Arrays.fill(counts, n);
        return dereferenceBatch(uuids, counts, cleanup);
    }

    /** Drop the record. The caller frees the tensor itself. */
    void forgetTensor(long uuid);

    /**
     * The descriptor a peer needs to read this tensor, or {@code null} when there is no record.
     *
     * <p>This is what lets an edge be rebuilt from uuids alone: ingestion and routing carry uuids, and anything
     * that has to put a descriptor back on the wire (a disaggregated loop re-emitting its external inputs, say)
     * looks it up here.
     */
    TensorPointerInfo getInfo(long uuid);

    /**
     * Whether the caller should marshal into {@link ColumnarTensorInfo}. Asked before minting, because the two
     * forms are built differently.
     */
    default boolean hasPutTensorBatchColumns() {
        return false;
    }

    /** Adds {@code n} references. */
    void incrementRef(long uuid, int n);

    default void incrementRef(long uuid) {
        incrementRef(uuid, 1);
    }

    /** Adds {@code counts[i]} references to {@code uuids[i]}; all uuids must be known (checked first). */
    default void incrementRefBatch(long[] uuids, int[] counts) {
        requireSameLength("increment_ref_batch", uuids.length, counts.length);
        requireKnown("increment_ref_batch", uuids);
        for (int i = 0; i < uuids.length; i++) {
            incrementRef(uuids[i], counts[i]);
        }
    }

    /**
     * {@link #incrementRefBatch} where every uuid takes the same count. The safety hold on a freshly stored output
     * batch is always 1, so the caller would otherwise build an n-long array of ones per batch.
     */
    default void incrementRefBatchUniform(long[] uuids, int n) {
        requireKnown("increment_ref_batch_uniform", uuids);
        for (long uuid : uuids) {
            incrementRef(uuid, n);
        }
    }

    /** Whether the tensor's memory was registered for remote reads. */
    boolean isRegistered(long uuid);

    /**
     * A fresh record ({@link ReferenceInfo#FRESH}) with {@code info} as its descriptor. {@code info.uuid()} must
     * be {@code uuid}; a uuid that already has a record is refused ({@code DUPLICATE_UUID}): uuids are minted once,
     * and overwriting would silently reset a live count.
     */
    void putTensor(long uuid, TensorPointerInfo info);

    /** {@link #putTensor} for a batch, validated first (known or repeated uuids refuse the whole batch). */
    default void putTensorBatch(long[] uuids, List<TensorPointerInfo> infos) {
        requireSameLength("put_tensor_batch", uuids.length, infos.size());
        LongHashSet seen = LongKeys.set();
        for (int i = 0; i < uuids.length; i++) {
            long uuid = uuids[i];
            if (contains(uuid) || !seen.add(uuid)) {
                throw errors().raise(TensorStoreException.Reason.DUPLICATE_UUID, uuid, "put_tensor_batch", "");
            }
            TensorPointerInfo info = infos.get(i);
            if (info == null || info.uuid() != uuid) {
                throw errors().raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuid, "put_tensor_batch",
                        "descriptor names another uuid");
            }
            if (info.dims().size() != info.stride().size()) {
                throw errors().raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuid, "put_tensor_batch",
                        "dims and stride differ in rank");
            }
        }
        for (int i = 0; i < uuids.length; i++) {
            putTensor(uuids[i], infos.get(i));
        }
    }

    /**
     * Columnar put, for a backend that pays per tensor to marshal. Returns whether it handled the batch. The
     * default says no: a bookkeeper that stores the descriptor by reference has nothing to marshal, so the caller
     * falls back to {@link #putTensorBatch} (e.g. with {@link ColumnarTensorInfo#toPointerInfos()}).
     */
    default boolean putTensorBatchColumns(ColumnarTensorInfo infos) {
        return false;
    }

    /**
     * Name one arena segment, once, as the arena grows into it. Keeps the name off {@link #setShmPlacement}, which
     * then crosses an index the caller already had. Registering the same name again is a no-op; another name
     * for a registered index is refused, since descriptors already stamped with it would change meaning.
     */
    void registerShmSegment(int index, String name);

    void setMemRegistered(long uuid, boolean memRegistered);

    void setPersist(long uuid, boolean persist);

    /**
     * Stamp arena placement onto descriptors already held: {@code shmSegment} becomes the name registered for
     * {@code segmentIdxs[i]} and {@code shmOffset} becomes {@code offsets[i]}. {@code -1} is "no segment", the
     * producer having spilled that tensor to its own file. A backend that copies descriptors in sees no later
     * in-place edit, so this is how placement reaches {@link #getInfo}. Validated first: unknown uuids and
     * unregistered segments refuse the whole call.
     */
    void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets);

    // ---- introspection: leak assertions, metrics, the store's presence check ----

    /** Records held now. Back to the baseline after a teardown, or something leaked. */
    int liveCount();

    /** Whether {@code uuid} has a record. Never an error. */
    boolean contains(long uuid);

    /** A snapshot of the reference state; unknown uuid throws. */
    ReferenceInfo referenceInfo(long uuid);

    /** Refusals so far, by reason. */
    ErrorCounts errors();

    private void requireSameLength(String op, int a, int b) {
        if (a != b) {
            throw errors().raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, op,
                    "parallel arrays differ in length: " + a + " vs " + b);
        }
    }

    private void requireKnown(String op, long[] uuids) {
        for (long uuid : uuids) {
            if (!contains(uuid)) {
                throw errors().unknown(uuid, op);
            }
        }
    }

    private void requireKnownAndDistinct(String op, long[] uuids) {
        requireKnown(op, uuids);
        LongHashSet seen = LongKeys.set();
        for (long uuid : uuids) {
            if (!seen.add(uuid)) {
                throw errors().raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuid, op, "uuid repeated in batch");
            }
        }
    }
}
