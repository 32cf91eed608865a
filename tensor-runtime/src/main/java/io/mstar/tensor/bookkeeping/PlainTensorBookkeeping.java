package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The reference bookkeeper: hash maps, the batched forms left to the interface's loops. Simple enough to be
 * obviously right, which is its job – the differential test holds {@link FastTensorBookkeeping} to it.
 *
 * <p>Keeps the caller's descriptor object. {@link TensorPointerInfo} is immutable, so the one edit the spec
 * makes to a held descriptor, {@link #setShmPlacement}, replaces it with a copy carrying the new placement.
 *
 * <p>Owned by the engine loop; not thread-safe.
 */
public final class PlainTensorBookkeeping implements TensorBookkeeping {

    /** Mutable per-uuid state; {@link ReferenceInfo} is the snapshot handed out. */
    private static final class Entry {
        long refCnt;
        boolean persist;
        boolean memRegistered;
        TensorPointerInfo info;

        Entry(TensorPointerInfo info) {
            this.info = info;
        }
    }

    private final Map<Long, Entry> entries = new HashMap<>();
    private final List<String> segments = new ArrayList<>();
    private final ErrorCounts errors = new ErrorCounts();

    private Entry entry(long uuid, String op) {
        Entry e = entries.get(uuid);
        if (e == null) {
            throw errors.unknown(uuid, op);
        }
        return e;
    }

    @Override
    public boolean canGc(long uuid) {
        Entry e = entry(uuid, "can_gc");
        return e.refCnt <= 0 && !e.persist;
    }

    @Override
    public void dereference(long uuid, int n) {
        entry(uuid, "dereference").refCnt -= n;
    }

    @Override
    public void forgetTensor(long uuid) {
        if (entries.remove(uuid) == null) {
            throw errors.unknown(uuid, "forget_tensor");
        }
    }

    @Override
    public TensorPointerInfo getInfo(long uuid) {
        Entry e = entries.get(uuid);
        return e == null ? null : e.info;
    }

    @Override
    public void incrementRef(long uuid, int n) {
        entry(uuid, "increment_ref").refCnt += n;
    }

    @Override
    public boolean isRegistered(long uuid) {
        return entry(uuid, "is_registered").memRegistered;
    }

    @Override
    public void putTensor(long uuid, TensorPointerInfo info) {
        if (info == null || info.uuid() != uuid) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuid, "put_tensor", "descriptor names another uuid");
        }
        if (info.dims().size() != info.stride().size()) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuid, "put_tensor", "dims and stride differ in rank");
        }
        if (entries.containsKey(uuid)) {
            throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, uuid, "put_tensor", "");
        }
        entries.put(uuid, new Entry(info));
    }

    @Override
    public void registerShmSegment(int index, String name) {
        if (index < 0 || name == null) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "index " + index + ", name " + name);
        }
        while (segments.size() <= index) {
            segments.add(null);
        }
        String old = segments.get(index);
        if (old != null && !old.equals(name)) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "segment " + index + " is already " + old + ", not " + name);
        }
        segments.set(index, name);
    }

    @Override
    public void setMemRegistered(long uuid, boolean memRegistered) {
        entry(uuid, "set_mem_registered").memRegistered = memRegistered;
    }

    @Override
    public void setPersist(long uuid, boolean persist) {
        entry(uuid, "set_persist").persist = persist;
    }

    @Override
    public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
        if (uuids.length != segmentIdxs.length || uuids.length != offsets.length) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "set_shm_placement", "parallel arrays differ in length: " + uuids.length + ", "
                            + segmentIdxs.length + ", " + offsets.length);
        }
        for (int i = 0; i < uuids.length; i++) {
            entry(uuids[i], "set_shm_placement");
            int idx = segmentIdxs[i];
            if (idx != -1 && (idx < 0 || idx >= segments.size() || segments.get(idx) == null)) {
                throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], "set_shm_placement",
                        "segment " + idx + " not registered");
            }
        }
        for (int i = 0; i < uuids.length; i++) {
            Entry e = entries.get(uuids[i]);
            TensorPointerInfo o = e.info;
            String segment = segmentIdxs[i] == -1 ? null : segments.get(segmentIdxs[i]);
            e.info = new TensorPointerInfo(o.uuid(), o.dims(), o.stride(), o.dtype(), o.nbytes(), o.address(),
                    o.offset(), o.sourceSessionId(), o.sourceEntity(), o.sourceTpSize(), o.sourceTpRank(), segment,
                    offsets[i], o.sourceNodeName(), o.sourceGraphWalk());
        }
    }

    @Override
    public int liveCount() {
        return entries.size();
    }

    @Override
    public boolean contains(long uuid) {
        return entries.containsKey(uuid);
    }

    @Override
    public ReferenceInfo referenceInfo(long uuid) {
        Entry e = entry(uuid, "reference_info");
        return new ReferenceInfo(e.refCnt, e.persist, e.memRegistered);
    }

    @Override
    public ErrorCounts errors() {
        return errors;
    }
}
