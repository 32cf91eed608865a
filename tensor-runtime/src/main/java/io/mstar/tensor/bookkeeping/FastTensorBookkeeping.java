package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The fast bookkeeper: a primitive open-addressing index over {@code long} uuids ({@link UuidIndex}) into dense
 * entry columns – reference counts, flags and every descriptor field in parallel primitive arrays – so the hot
 * paths (a batch put, the uniform safety hold, the batched dereference) box nothing and allocate nothing per
 * tensor. The fields constant across one node's output batch (session, entity, node, walk, tp size and rank) are
 * interned once per batch as an "origin" shared by its rows, reference-counted so that walks which end release
 * theirs; dtype names are interned for good (there are a handful).
 *
 * <p>A descriptor handed in is COPIED into the columns, unlike {@link PlainTensorBookkeeping}, which keeps the
 * caller's object. Anything relying on a later edit of the descriptor (register-for-send stamping the arena
 * placement) has to write it back with {@link #setShmPlacement}; {@link #getInfo} builds a
 * {@link TensorPointerInfo} from the columns on first ask (the segment name from {@link #registerShmSegment}) and
 * hands the same one out until the record changes.
 *
 * <p>Owned by the engine loop; not thread-safe. Observably identical to the plain backend (held to it by the
 * differential test), including which error a malformed batch raises first.
 */
public final class FastTensorBookkeeping implements TensorBookkeeping {

    private static final byte PERSIST = 1;
    private static final byte MEM_REGISTERED = 2;
    /** Dims/stride stored inline per entry up to this rank; higher ranks get their own arrays. */
    static final int INLINE_DIMS = 6;

    private record Origin(String sessionId, String entity, String nodeName, String graphWalk, int tpSize, int tpRank) {
    }

    private final UuidIndex index;
    private final ErrorCounts errors = new ErrorCounts();

    // ---- entry columns, indexed by entry number; free entries are stacked in freeEntries ----
    private int entryCap;
    private int entryHigh;
    private int[] freeEntries;
    private int freeTop;
    private long[] uuid;
    private long[] refCnt;
    private byte[] flags;
    private long[] address;
    private long[] nbytes;
    private long[] offset;
    private long[] shmOffset;
    private int[] shmSegment;
    private int[] dtype;
    private int[] origin;
    private int[] ndims;
    private int[] stamp;
    private long[] dims;
    private long[] stride;
    private long[][] bigDims;
    private long[][] bigStride;
    /**
     * The descriptor getInfo built from the columns, kept until the record changes or goes: a lookup that
     * allocated a fresh record (and boxed its dims) each time ran some twenty times slower than the plain
     * backend handing back the object it holds. Filled only for uuids somebody looks up.
     */
    private TensorPointerInfo[] infoCache;

    // ---- batch scratch: entries resolved by a batch's validation pass, applied by the next ----
    private int[] scratch = new int[64];
    private int epoch = 1;

    // ---- interning ----
    private final Map<Origin, Integer> originIds = new HashMap<>();
    private Origin[] origins = new Origin[16];
    private int[] originUses = new int[16];
    private int originHigh;
    private int[] freeOrigins = new int[16];
    private int freeOriginTop;
    private int lastOrigin = -1;
    private final Map<String, Integer> dtypeIds = new HashMap<>();
    private final List<String> dtypeNames = new ArrayList<>();
    private int[] batchDtypes = new int[8];
    /** Registered arena segment index -> id in segmentNames, -1 where none. */
    private int[] segments = filled(8);
    /** Every segment name seen: registered ones and those on descriptors put from peers. Bounded by segments. */
    private final List<String> segmentNames = new ArrayList<>();
    private final Map<String, Integer> segmentNameIds = new HashMap<>();

    private static int[] filled(int n) {
        int[] a = new int[n];
        Arrays.fill(a, -1);
        return a;
    }

    public FastTensorBookkeeping() {
        this(1024);
    }

    /** @param expected tensors expected live at once; the tables start sized for it and grow past it */
    public FastTensorBookkeeping(int expected) {
        index = new UuidIndex(expected);
        allocateEntries(Math.max(16, expected));
    }

    private void allocateEntries(int cap) {
        entryCap = cap;
        freeEntries = freeEntries == null ? new int[cap] : Arrays.copyOf(freeEntries, cap);
        uuid = grow(uuid, cap);
        refCnt = grow(refCnt, cap);
        flags = flags == null ? new byte[cap] : Arrays.copyOf(flags, cap);
        address = grow(address, cap);
        nbytes = grow(nbytes, cap);
        offset = grow(offset, cap);
        shmOffset = grow(shmOffset, cap);
        shmSegment = grow(shmSegment, cap);
        dtype = grow(dtype, cap);
        origin = grow(origin, cap);
        ndims = grow(ndims, cap);
        stamp = grow(stamp, cap);
        dims = grow(dims, cap * INLINE_DIMS);
        stride = grow(stride, cap * INLINE_DIMS);
        bigDims = bigDims == null ? new long[cap][] : Arrays.copyOf(bigDims, cap);
        bigStride = bigStride == null ? new long[cap][] : Arrays.copyOf(bigStride, cap);
        infoCache = infoCache == null ? new TensorPointerInfo[cap] : Arrays.copyOf(infoCache, cap);
    }

    private static long[] grow(long[] a, int cap) {
        return a == null ? new long[cap] : Arrays.copyOf(a, cap);
    }

    private static int[] grow(int[] a, int cap) {
        return a == null ? new int[cap] : Arrays.copyOf(a, cap);
    }

    private int newEntry(long id, int originId, int dtypeId, long addr, long bytes, long off) {
        int e;
        if (freeTop > 0) {
            e = freeEntries[--freeTop];
        } else {
            if (entryHigh == entryCap) {
                allocateEntries(entryCap * 2);
            }
            e = entryHigh++;
        }
        uuid[e] = id;
        refCnt[e] = 0;
        flags[e] = 0;
        address[e] = addr;
        nbytes[e] = bytes;
        offset[e] = off;
        shmOffset[e] = 0;
        shmSegment[e] = -1;
        dtype[e] = dtypeId;
        origin[e] = originId;
        originUses[originId]++;
        stamp[e] = 0;
        return e;
    }

    private void freeEntry(int e) {
        releaseOrigin(origin[e]);
        bigDims[e] = null;
        bigStride[e] = null;
        infoCache[e] = null;
        freeEntries[freeTop++] = e;
    }

    private void setLayout(int e, int rank, long[] d, long[] s, int from) {
        ndims[e] = rank;
        if (rank <= INLINE_DIMS) {
            // A loop, not arraycopy: for three or four longs the intrinsic's setup costs more than the copy.
            int base = e * INLINE_DIMS;
            for (int k = 0; k < rank; k++) {
                dims[base + k] = d[from + k];
                stride[base + k] = s[from + k];
            }
        } else {
            bigDims[e] = Arrays.copyOfRange(d, from, from + rank);
            bigStride[e] = Arrays.copyOfRange(s, from, from + rank);
        }
    }

    // ---- interning ----

    private int internOrigin(String sessionId, String entity, String nodeName, String walk, int tpSize, int tpRank) {
        if (lastOrigin >= 0) {
            Origin o = origins[lastOrigin];
            if (o.tpSize == tpSize && o.tpRank == tpRank && o.sessionId.equals(sessionId) && o.entity.equals(entity)
                    && Objects.equals(o.nodeName, nodeName) && Objects.equals(o.graphWalk, walk)) {
                return lastOrigin;
            }
        }
        Origin key = new Origin(sessionId, entity, nodeName, walk, tpSize, tpRank);
        Integer id = originIds.get(key);
        if (id == null) {
            int o;
            if (freeOriginTop > 0) {
                o = freeOrigins[--freeOriginTop];
            } else {
                if (originHigh == origins.length) {
                    origins = Arrays.copyOf(origins, originHigh * 2);
                    originUses = Arrays.copyOf(originUses, originHigh * 2);
                    freeOrigins = Arrays.copyOf(freeOrigins, originHigh * 2);
                }
                o = originHigh++;
            }
            origins[o] = key;
            originUses[o] = 0;
            originIds.put(key, o);
            id = o;
        }
        lastOrigin = id;
        return id;
    }

    private void releaseOrigin(int o) {
        if (--originUses[o] == 0) {
            originIds.remove(origins[o]);
            origins[o] = null;
            freeOrigins[freeOriginTop++] = o;
            if (lastOrigin == o) {
                lastOrigin = -1;
            }
        }
    }

    private int internDtype(String name) {
        Integer id = dtypeIds.get(name);
        if (id == null) {
            id = dtypeNames.size();
            dtypeNames.add(name);
            dtypeIds.put(name, id);
        }
        return id;
    }

    // ---- lookups ----

    private int entry(long id, String op) {
        int e = index.get(id);
        if (e < 0) {
            throw errors.unknown(id, op);
        }
        return e;
    }

    /** Resolves every uuid to its index slot in scratch (growing it), failing on the first unknown one. */
    private int[] resolveAll(long[] uuids, String op) {
        if (scratch.length < uuids.length) {
            scratch = new int[Math.max(uuids.length, scratch.length * 2)];
        }
        int[] s = scratch;
        for (int i = 0; i < uuids.length; i++) {
            int slot = index.slot(uuids[i]);
            if (slot < 0) {
                throw errors.unknown(uuids[i], op);
            }
            s[i] = slot;
        }
        return s;
    }

    private void requireDistinct(long[] uuids, int[] slots, String op) {
        if (++epoch == Integer.MAX_VALUE) {
            Arrays.fill(stamp, 0);
            epoch = 1;
        }
        for (int i = 0; i < uuids.length; i++) {
            int e = index.entryAt(slots[i]);
            if (stamp[e] == epoch) {
                throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], op, "uuid repeated in batch");
            }
            stamp[e] = epoch;
        }
    }

    private void requireSameLength(String op, int a, int b) {
        if (a != b) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, op,
                    "parallel arrays differ in length: " + a + " vs " + b);
        }
    }

    // ---- TensorBookkeeping ----

    @Override
    public boolean canGc(long id) {
        int e = entry(id, "can_gc");
        return refCnt[e] <= 0 && (flags[e] & PERSIST) == 0;
    }

    @Override
    public void dereference(long id, int n) {
        refCnt[entry(id, "dereference")] -= n;
    }

    @Override
    public Collectable dereferenceBatch(long[] uuids, int[] counts, boolean cleanup) {
        requireSameLength("dereference_batch", uuids.length, counts.length);
        return dereferenceResolved(uuids, counts, 0, cleanup, "dereference_batch");
    }

    @Override
    public Collectable dereferenceBatchUniform(long[] uuids, int n, boolean cleanup) {
        return dereferenceResolved(uuids, null, n, cleanup, "dereference_batch");
    }

    private Collectable dereferenceResolved(long[] uuids, int[] counts, int n, boolean cleanup, String op) {
        int[] slots = resolveAll(uuids, op);
        requireDistinct(uuids, slots, op);
        Collectable.Builder out = new Collectable.Builder(uuids.length);
        for (int i = 0; i < uuids.length; i++) {
            int slot = slots[i];
            int e = index.entryAt(slot);
            long r = refCnt[e] -= counts == null ? n : counts[i];
            if (r <= 0 && (flags[e] & PERSIST) == 0) {
                out.add(uuids[i], (flags[e] & MEM_REGISTERED) != 0);
                if (cleanup) {
                    index.removeAt(slot);
                    freeEntry(e);
                }
            }
        }
        return out.build();
    }

    @Override
    public void forgetTensor(long id) {
        int e = index.remove(id);
        if (e < 0) {
            throw errors.unknown(id, "forget_tensor");
        }
        freeEntry(e);
    }

    @Override
    public TensorPointerInfo getInfo(long id) {
        int e = index.get(id);
        if (e < 0) {
            return null;
        }
        TensorPointerInfo cached = infoCache[e];
        if (cached != null) {
            return cached;
        }
        int rank = ndims[e];
        Long[] d = new Long[rank];
        Long[] s = new Long[rank];
        if (rank <= INLINE_DIMS) {
            int base = e * INLINE_DIMS;
            for (int k = 0; k < rank; k++) {
                d[k] = dims[base + k];
                s[k] = stride[base + k];
            }
        } else {
            for (int k = 0; k < rank; k++) {
                d[k] = bigDims[e][k];
                s[k] = bigStride[e][k];
            }
        }
        Origin o = origins[origin[e]];
        int seg = shmSegment[e];
        TensorPointerInfo info = new TensorPointerInfo(id, List.of(d), List.of(s), dtypeNames.get(dtype[e]), nbytes[e],
                address[e], offset[e], o.sessionId, o.entity, o.tpSize, o.tpRank, seg < 0 ? null : segmentNames.get(seg),
                shmOffset[e], o.nodeName, o.graphWalk);
        infoCache[e] = info;
        return info;
    }

    @Override
    public boolean hasPutTensorBatchColumns() {
        return true;
    }

    @Override
    public void incrementRef(long id, int n) {
        refCnt[entry(id, "increment_ref")] += n;
    }

    @Override
    public void incrementRefBatch(long[] uuids, int[] counts) {
        requireSameLength("increment_ref_batch", uuids.length, counts.length);
        int[] slots = resolveAll(uuids, "increment_ref_batch");
        for (int i = 0; i < uuids.length; i++) {
            refCnt[index.entryAt(slots[i])] += counts[i];
        }
    }

    @Override
    public void incrementRefBatchUniform(long[] uuids, int n) {
        int[] slots = resolveAll(uuids, "increment_ref_batch_uniform");
        for (int i = 0; i < uuids.length; i++) {
            refCnt[index.entryAt(slots[i])] += n;
        }
    }

    @Override
    public boolean isRegistered(long id) {
        return (flags[entry(id, "is_registered")] & MEM_REGISTERED) != 0;
    }

    @Override
    public void putTensor(long id, TensorPointerInfo info) {
        if (info == null || info.uuid() != id) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, id, "put_tensor", "descriptor names another uuid");
        }
        if (info.dims().size() != info.stride().size()) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, id, "put_tensor", "dims and stride differ in rank");
        }
        if (index.get(id) >= 0) {
            throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, id, "put_tensor", "");
        }
        insert(info);
    }

    private void insert(TensorPointerInfo info) {
        int o = internOrigin(info.sourceSessionId(), info.sourceEntity(), info.sourceNodeName(),
                info.sourceGraphWalk(), info.sourceTpSize(), info.sourceTpRank());
        int e = newEntry(info.uuid(), o, internDtype(info.dtype()), info.address(), info.nbytes(), info.offset());
        // Not cached here: the copy is the point (a later edit of the caller's object must not show through).
        int rank = info.dims().size();
        long[] d = new long[rank];
        long[] s = new long[rank];
        for (int k = 0; k < rank; k++) {
            d[k] = info.dims().get(k);
            s[k] = info.stride().get(k);
        }
        setLayout(e, rank, d, s, 0);
        // A consumer's record of a remote tensor arrives with the producer's segment name already on it.
        shmSegment[e] = info.shmSegment() == null ? -1 : internSegmentName(info.shmSegment());
        shmOffset[e] = info.shmOffset();
        index.putAbsent(info.uuid(), e);
    }

    @Override
    public boolean putTensorBatchColumns(ColumnarTensorInfo infos) {
        int rows = infos.size();
        long[] ids = infos.uuidColumn();
        long[] addrs = infos.addressColumn();
        long[] bytes = infos.nbytesColumn();
        int[] ranks = infos.ndimsColumn();
        int[] dts = infos.dtypeIdxColumn();
        long[] dFlat = infos.dimsFlatColumn();
        long[] sFlat = infos.strideFlatColumn();
        int nDtypes = infos.dtypeCount();
        if (batchDtypes.length < nDtypes) {
            batchDtypes = new int[Math.max(nDtypes, batchDtypes.length * 2)];
        }
        for (int k = 0; k < nDtypes; k++) {
            batchDtypes[k] = internDtype(infos.dtypeName(k));
        }
        int o = internOrigin(infos.sourceSessionId(), infos.sourceEntity(), infos.sourceNodeName(),
                infos.sourceGraphWalk(), infos.tpSize(), infos.tpRank());
        // Holds the origin across the batch so undoing a partial batch cannot free it under us.
        originUses[o]++;
        try {
            // One probe sequence per row answers "held already?" and inserts. A held uuid, or one repeated within
            // the batch, undoes the rows already in, so a refused batch changes nothing and the error names the
            // first offending row, as the plain backend's would.
            int flat = 0;
            for (int i = 0; i < rows; i++) {
                long id = ids[i];
                int e = newEntry(id, o, batchDtypes[dts[i]], addrs[i], bytes[i], 0L);
                if (index.putIfAbsent(id, e) >= 0) {
                    freeEntry(e);
                    for (int j = 0; j < i; j++) {
                        freeEntry(index.remove(ids[j]));
                    }
                    throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, id, "put_tensor_batch", "");
                }
                setLayout(e, ranks[i], dFlat, sFlat, flat);
                flat += ranks[i];
            }
        } finally {
            releaseOrigin(o);
        }
        return true;
    }

    /** The id of a segment name in {@link #segmentNames}, interning it on first sight. */
    private int internSegmentName(String name) {
        Integer id = segmentNameIds.get(name);
        if (id == null) {
            id = segmentNames.size();
            segmentNames.add(name);
            segmentNameIds.put(name, id);
        }
        return id;
    }

    @Override
    public void registerShmSegment(int idx, String name) {
        if (idx < 0 || name == null) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "index " + idx + ", name " + name);
        }
        if (idx >= segments.length) {
            int old = segments.length;
            segments = Arrays.copyOf(segments, Math.max(idx + 1, old * 2));
            Arrays.fill(segments, old, segments.length, -1);
        }
        int current = segments[idx];
        if (current >= 0 && !segmentNames.get(current).equals(name)) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "segment " + idx + " is already " + segmentNames.get(current) + ", not " + name);
        }
        segments[idx] = internSegmentName(name);
    }

    @Override
    public void setMemRegistered(long id, boolean memRegistered) {
        int e = entry(id, "set_mem_registered");
        flags[e] = (byte) (memRegistered ? flags[e] | MEM_REGISTERED : flags[e] & ~MEM_REGISTERED);
    }

    @Override
    public void setPersist(long id, boolean persist) {
        int e = entry(id, "set_persist");
        flags[e] = (byte) (persist ? flags[e] | PERSIST : flags[e] & ~PERSIST);
    }

    @Override
    public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
        if (uuids.length != segmentIdxs.length || uuids.length != offsets.length) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "set_shm_placement", "parallel arrays differ in length: " + uuids.length + ", "
                            + segmentIdxs.length + ", " + offsets.length);
        }
        if (scratch.length < uuids.length) {
            scratch = new int[Math.max(uuids.length, scratch.length * 2)];
        }
        int[] entries = scratch;
        for (int i = 0; i < uuids.length; i++) {
            entries[i] = entry(uuids[i], "set_shm_placement");
            int idx = segmentIdxs[i];
            if (idx != -1 && (idx < 0 || idx >= segments.length || segments[idx] < 0)) {
                throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], "set_shm_placement",
                        "segment " + idx + " not registered");
            }
        }
        for (int i = 0; i < uuids.length; i++) {
            shmSegment[entries[i]] = segmentIdxs[i] == -1 ? -1 : segments[segmentIdxs[i]];
            infoCache[entries[i]] = null;
            shmOffset[entries[i]] = offsets[i];
        }
    }

    @Override
    public int liveCount() {
        return index.size();
    }

    @Override
    public boolean contains(long id) {
        return index.get(id) >= 0;
    }

    @Override
    public ReferenceInfo referenceInfo(long id) {
        int e = entry(id, "reference_info");
        return new ReferenceInfo(refCnt[e], (flags[e] & PERSIST) != 0, (flags[e] & MEM_REGISTERED) != 0);
    }

    @Override
    public ErrorCounts errors() {
        return errors;
    }

    /** Index slots, for tests of growth and tombstone clearing. */
    int indexCapacity() {
        return index.capacity();
    }

    int indexRebuilds() {
        return index.rebuilds();
    }

    /** Origins interned now, for tests that walks ending release theirs. */
    int internedOrigins() {
        return originIds.size();
    }
}
