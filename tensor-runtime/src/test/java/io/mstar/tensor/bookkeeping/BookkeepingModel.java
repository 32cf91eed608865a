package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The shadow model the differential test holds both backends to: the spec's rules written as directly as
 * possible, independent of either backend's code, so a bug shared by both still shows. Its methods answer what a
 * correct backend answers, throwing {@link TensorStoreException} with the reason and uuid a backend must raise.
 */
final class BookkeepingModel {

    static final class Rec {
        long ref;
        boolean persist;
        boolean memRegistered;
        TensorPointerInfo info;
    }

    final Map<Long, Rec> live = new HashMap<>();
    final Map<Integer, String> segments = new HashMap<>();

    private static TensorStoreException fail(TensorStoreException.Reason r, long uuid, String op) {
        return new TensorStoreException(r, uuid, op, "");
    }

    private Rec rec(long uuid, String op) {
        Rec r = live.get(uuid);
        if (r == null) {
            throw fail(TensorStoreException.Reason.UNKNOWN_UUID, uuid, op);
        }
        return r;
    }

    static boolean collectable(Rec r) {
        return r.ref <= 0 && !r.persist;
    }

    boolean canGc(long uuid) {
        return collectable(rec(uuid, "can_gc"));
    }

    void add(long uuid, long n) {
        rec(uuid, "ref").ref += n;
    }

    boolean isRegistered(long uuid) {
        return rec(uuid, "is_registered").memRegistered;
    }

    void setPersist(long uuid, boolean p) {
        rec(uuid, "set_persist").persist = p;
    }

    void setMemRegistered(long uuid, boolean m) {
        rec(uuid, "set_mem_registered").memRegistered = m;
    }

    void forget(long uuid) {
        rec(uuid, "forget_tensor");
        live.remove(uuid);
    }

    TensorPointerInfo getInfo(long uuid) {
        Rec r = live.get(uuid);
        return r == null ? null : r.info;
    }

    ReferenceInfo referenceInfo(long uuid) {
        Rec r = rec(uuid, "reference_info");
        return new ReferenceInfo(r.ref, r.persist, r.memRegistered);
    }

    void put(long uuid, TensorPointerInfo info) {
        if (info.uuid() != uuid || info.dims().size() != info.stride().size()) {
            throw fail(TensorStoreException.Reason.INVALID_ARGUMENT, uuid, "put_tensor");
        }
        if (live.containsKey(uuid)) {
            throw fail(TensorStoreException.Reason.DUPLICATE_UUID, uuid, "put_tensor");
        }
        Rec r = new Rec();
        r.info = info;
        live.put(uuid, r);
    }

    void putBatch(long[] uuids, List<TensorPointerInfo> infos) {
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < uuids.length; i++) {
            if (live.containsKey(uuids[i]) || !seen.add(uuids[i])) {
                throw fail(TensorStoreException.Reason.DUPLICATE_UUID, uuids[i], "put_tensor_batch");
            }
        }
        for (int i = 0; i < uuids.length; i++) {
            put(uuids[i], infos.get(i));
        }
    }

    void incrementBatch(long[] uuids, int[] counts) {
        for (long u : uuids) {
            rec(u, "increment_ref_batch");
        }
        for (int i = 0; i < uuids.length; i++) {
            live.get(uuids[i]).ref += counts[i];
        }
    }

    Collectable dereferenceBatch(long[] uuids, int[] counts, boolean cleanup) {
        for (long u : uuids) {
            rec(u, "dereference_batch");
        }
        Set<Long> seen = new HashSet<>();
        for (long u : uuids) {
            if (!seen.add(u)) {
                throw fail(TensorStoreException.Reason.INVALID_ARGUMENT, u, "dereference_batch");
            }
        }
        List<Long> out = new ArrayList<>();
        List<Boolean> reg = new ArrayList<>();
        for (int i = 0; i < uuids.length; i++) {
            Rec r = live.get(uuids[i]);
            r.ref -= counts[i];
            if (collectable(r)) {
                out.add(uuids[i]);
                reg.add(r.memRegistered);
                if (cleanup) {
                    live.remove(uuids[i]);
                }
            }
        }
        long[] u = new long[out.size()];
        boolean[] g = new boolean[out.size()];
        for (int i = 0; i < u.length; i++) {
            u[i] = out.get(i);
            g[i] = reg.get(i);
        }
        return new Collectable(u, g);
    }

    void registerSegment(int idx, String name) {
        String old = segments.get(idx);
        if (old != null && !old.equals(name)) {
            throw fail(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, "register_shm_segment");
        }
        segments.put(idx, name);
    }

    void setShmPlacement(long[] uuids, int[] segs, long[] offsets) {
        for (int i = 0; i < uuids.length; i++) {
            rec(uuids[i], "set_shm_placement");
            if (segs[i] != -1 && !segments.containsKey(segs[i])) {
                throw fail(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], "set_shm_placement");
            }
        }
        for (int i = 0; i < uuids.length; i++) {
            Rec r = live.get(uuids[i]);
            TensorPointerInfo o = r.info;
            r.info = new TensorPointerInfo(o.uuid(), o.dims(), o.stride(), o.dtype(), o.nbytes(), o.address(),
                    o.offset(), o.sourceSessionId(), o.sourceEntity(), o.sourceTpSize(), o.sourceTpRank(),
                    segs[i] == -1 ? null : segments.get(segs[i]), offsets[i], o.sourceNodeName(), o.sourceGraphWalk());
        }
    }
}
