package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.Arrays;

/**
 * The fast bookkeeper: a two-level index over {@code long} uuids into dense entry records – the reference count,
 * flags and every descriptor field but the layout packed into 8 consecutive longs of one array, the dims and strides
 * of a whole batch in one {@link LayoutBlocks} block – so the hot paths (a batch put, the uniform safety hold, the
 * batched dereference) box nothing and allocate nothing per tensor.
 *
 * <p>The index ({@link RowIndex}) splits a uuid into a page key and a row within a page of 64, so a batch of
 * consecutive uuids costs one or two hash probes; entries ({@link EntryRecords}) and pages are recycled from LIFO
 * free lists, so a fresh batch lands on memory the batch before it just released. A page goes back when its last
 * row does, so a scattered population costs a page of row slots and cached-descriptor slots (about 512 bytes) per
 * live uuid at worst, never a page of entry records.
 *
 * <p>The fields constant across one node's output batch (session, entity, node, walk, tp size and rank) are
 * interned once per batch as an "origin" shared by its rows ({@link Origins}), reference-counted so that walks which
 * end release theirs; dtype and segment names are interned for good ({@link InternedNames}; there are a handful).
 *
 * <p>A descriptor handed in is COPIED into its entry record, unlike {@link PlainTensorBookkeeping}, which keeps the
 * caller's object. Anything relying on a later edit of the descriptor (register-for-send stamping the arena
 * placement) has to write it back with {@link #setShmPlacement}; {@link #getInfo} builds a
 * {@link TensorPointerInfo} from the record on first ask ({@link Descriptors}; the segment name from
 * {@link #registerShmSegment}) and hands the same one out until the record changes.
 *
 * <p>Owned by the engine loop; not thread-safe. Observably identical to the plain backend (held to it by the
 * differential test), including which error a malformed batch raises first.
 */
public final class FastTensorBookkeeping implements TensorBookkeeping {

    private static final int SHIFT = EntryRecords.SHIFT;
    private static final int REF = EntryRecords.REF;
    private static final int IDS = EntryRecords.IDS;
    private static final int LAYOUT = EntryRecords.LAYOUT;
    private static final long PERSIST = EntryRecords.PERSIST;
    private static final long MEM_REGISTERED = EntryRecords.MEM_REGISTERED;
    private static final int PAGE_BITS = RowIndex.PAGE_BITS;
    private static final int ROW_MASK = RowIndex.ROW_MASK;

    private final ErrorCounts errors = new ErrorCounts();
    private final RowIndex index;
    private final EntryRecords records;
    private final LayoutBlocks layouts;
    private final Origins origins = new Origins();
    private final InternedNames dtypeNames = new InternedNames();
    private final ArenaSegments segments = new ArenaSegments();
    private final Descriptors descriptors;
    /**
     * The descriptor getInfo built from the entry record, by row position, kept until the record changes or goes: a
     * lookup that allocated a fresh record (and boxed its dims) each time ran some twenty times slower than the
     * plain backend handing back the object it holds. By row position, so a lookup that misses lookupInfos is a
     * page probe and one load. Filled only for uuids somebody looks up.
     */
    private TensorPointerInfo[] infoByRow;
    /**
     * Descriptors again, direct-mapped by the uuid's low bits in front of the page probe: uuids are minted from
     * counters, so the live ones fill consecutive slots and a lookup is one load and a compare of the descriptor's
     * own uuid. A colliding uuid takes the slot over; infoByRow still holds both, so neither is built again.
     */
    private TensorPointerInfo[] lookupInfos;
    // ---- batch scratch, reused from call to call ----
    private long[] outUuids = new long[64];
    private boolean[] outRegistered = new boolean[64];
    private int[] batchDtypes = new int[8];
    /** Whether the uuids resolveAll last resolved were strictly increasing, hence distinct. */
    private boolean resolvedIncreasing;

    public FastTensorBookkeeping() {
        this(1024);
    }

    /** @param expected tensors expected live at once; the tables start sized for it and grow past it */
    public FastTensorBookkeeping(int expected) {
        index = new RowIndex(Math.max(4, expected / RowIndex.PAGE * 2), this::rowCapacity);
        records = new EntryRecords(Math.max(16, expected));
        layouts = new LayoutBlocks(Math.max(16, expected) * 8);
        descriptors = new Descriptors(records, layouts, origins, dtypeNames, segments);
    }

    private void rowCapacity(int positions) {
        infoByRow = infoByRow == null ? new TensorPointerInfo[positions] : Arrays.copyOf(infoByRow, positions);
        lookupInfos = new TensorPointerInfo[Integer.highestOneBit(positions - 1) << 1];
    }

    /** Drops the record at row position {@code pos}, its entry, its uses of origin and layout block, its page. */
    private void unlink(int pos) {
        forgetInfo(pos);
        int e = index.unlink(pos);
        records.give(e);
        origins.release(records.originOf(e), 1);
        layouts.release(records.blockOf(e), 1);
    }

    private int entry(long id, String op) {
        int pos = index.find(id);
        if (pos < 0) {
            throw errors.unknown(id, op);
        }
        return index.rows()[pos] - 1;
    }

    /**
     * Resolves every uuid to its row position in the index's scratch, failing on the first unknown one. A run of
     * uuids on one page (a batch) probes the page index once.
     */
    private int[] resolveAll(long[] uuids, String op) {
        int[] s = index.scratch(uuids.length);
        int[] r = index.rows();
        PageIndex pg = index.pages();
        long curKey = RowIndex.NO_PAGE_KEY;
        int base = -1;
        boolean increasing = true;
        long prev = Long.MIN_VALUE;
        for (int i = 0; i < uuids.length; i++) {
            long id = uuids[i];
            // Long.MIN_VALUE as the first uuid only costs the repeated-uuid check.
            increasing &= id > prev;
            prev = id;
            long key = id >>> PAGE_BITS;
            if (key != curKey) {
                int p = pg.get(key);
                base = p < 0 ? -1 : p << PAGE_BITS;
                curKey = key;
            }
            int pos = base | (int) id & ROW_MASK;
            if (base < 0 || r[pos] == 0) {
                throw errors.unknown(id, op);
            }
            s[i] = pos;
        }
        resolvedIncreasing = increasing;
        return s;
    }

    /**
     * Refuses a uuid repeated in the batch just resolved. A strictly increasing batch (the usual run), which
     * {@link #resolveAll} noticed on its way, needs no more than that.
     */
    private void requireDistinct(long[] uuids, int[] positions, String op) {
        if (resolvedIncreasing) {
            return;
        }
        records.newEpoch();
        int[] r = index.rows();
        for (int i = 0; i < uuids.length; i++) {
            if (!records.stampFirst(r[positions[i]] - 1)) {
                throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], op, "uuid repeated in batch");
            }
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
        return records.words()[e << SHIFT] <= 0 && !records.has(e, PERSIST);
    }

    @Override
    public void dereference(long id, int n) {
        records.words()[entry(id, "dereference") << SHIFT] -= n;
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
        int[] positions = resolveAll(uuids, op);
        requireDistinct(uuids, positions, op);
        if (outUuids.length < uuids.length) {
            outUuids = new long[Math.max(uuids.length, outUuids.length * 2)];
            outRegistered = new boolean[outUuids.length];
        }
        long[] ou = outUuids;
        boolean[] or = outRegistered;
        int found = 0;
        int[] r = index.rows();
        // A batch's rows share an origin, a layout block and a page or two: their counts are settled once per run
        // of rows, not per row.
        int runOrigin = -1;
        int run = 0;
        int runBlock = -1;
        int blockRun = 0;
        int runPage = -1;
        int pageRun = 0;
        long[] t = records.words();
        int[] free = records.freeStack();
        int top = records.top();
        for (int i = 0; i < uuids.length; i++) {
            int pos = positions[i];
            int e = r[pos] - 1;
            int b = e << SHIFT;
            long left = t[b + REF] -= counts == null ? n : counts[i];
            long layout = t[b + LAYOUT];
            if (left <= 0 && (layout & PERSIST) == 0) {
                ou[found] = uuids[i];
                or[found] = (layout & MEM_REGISTERED) != 0;
                found++;
                if (cleanup) {
                    int block = (int) (layout >>> 32);
                    if (block != runBlock) {
                        // A block is one put's, so one origin's: the origin can change only where the block does.
                        if (blockRun > 0) {
                            layouts.release(runBlock, blockRun);
                            run += blockRun;
                        }
                        runBlock = block;
                        blockRun = 0;
                        int o = (int) (t[b + IDS] >>> 32);
                        if (o != runOrigin) {
                            if (run > 0) {
                                origins.release(runOrigin, run);
                            }
                            runOrigin = o;
                            run = 0;
                        }
                    }
                    blockRun++;
                    int p = pos >>> PAGE_BITS;
                    if (p != runPage) {
                        // Distinct uuids: a page emptied here is named by no later position in this batch.
                        if (pageRun > 0) {
                            index.releaseRows(runPage, pageRun);
                        }
                        runPage = p;
                        pageRun = 0;
                    }
                    pageRun++;
                    r[pos] = 0;
                    forgetInfo(pos);
                    free[top++] = e;
                }
            }
        }
        records.top(top);
        if (blockRun > 0) {
            layouts.release(runBlock, blockRun);
            origins.release(runOrigin, run + blockRun);
        }
        if (pageRun > 0) {
            index.releaseRows(runPage, pageRun);
        }
        if (cleanup) {
            index.counted(-found);
        }
        // Gathered in reused scratch and copied out at the exact length: allocating the answer up front and
        // filling it cost a zeroing pass and a growth check per uuid, about a tenth of a whole batch.
        return found == 0 ? Collectable.NONE
                : new Collectable(Arrays.copyOf(ou, found), Arrays.copyOf(or, found));
    }

    @Override
    public void forgetTensor(long id) {
        int pos = index.find(id);
        if (pos < 0) {
            throw errors.unknown(id, "forget_tensor");
        }
        unlink(pos);
    }

    /** Drops the descriptor built for row position {@code pos} from both caches. */
    private void forgetInfo(int pos) {
        TensorPointerInfo info = infoByRow[pos];
        if (info != null) {
            infoByRow[pos] = null;
            int s = (int) info.uuid() & (lookupInfos.length - 1);
            if (lookupInfos[s] == info) {
                lookupInfos[s] = null;
            }
        }
    }

    @Override
    public TensorPointerInfo getInfo(long id) {
        TensorPointerInfo[] infos = lookupInfos;
        int s = (int) id & (infos.length - 1);
        TensorPointerInfo hit = infos[s];
        if (hit != null && hit.uuid() == id) {
            return hit;
        }
        return lookupMiss(id, s);
    }

    /** Kept out of {@link #getInfo} so that the hit path stays small enough for callers to inline. */
    private TensorPointerInfo lookupMiss(long id, int s) {
        TensorPointerInfo info = probeInfo(id);
        if (info != null) {
            lookupInfos[s] = info;
        }
        return info;
    }

    private TensorPointerInfo probeInfo(long id) {
        int p = index.pageOf(id >>> PAGE_BITS);
        if (p < 0) {
            return null;
        }
        int pos = p << PAGE_BITS | (int) id & ROW_MASK;
        TensorPointerInfo cached = infoByRow[pos];
        if (cached != null) {
            return cached;
        }
        int e = index.rows()[pos] - 1;
        if (e < 0) {
            return null;
        }
        return infoByRow[pos] = descriptors.build(id, e);
    }


    @Override
    public boolean hasPutTensorBatchColumns() {
        return true;
    }

    @Override
    public void incrementRef(long id, int n) {
        records.words()[entry(id, "increment_ref") << SHIFT] += n;
    }

    @Override
    public void incrementRefBatch(long[] uuids, int[] counts) {
        requireSameLength("increment_ref_batch", uuids.length, counts.length);
        incrementResolving(uuids, counts, 0, "increment_ref_batch");
    }

    @Override
    public void incrementRefBatchUniform(long[] uuids, int n) {
        incrementResolving(uuids, null, n, "increment_ref_batch_uniform");
    }

    /**
     * Resolves and adds in one pass; an unknown uuid takes back what was added before it, so a refused batch
     * still changes nothing (one owner thread: nobody sees the interim counts).
     */
    private void incrementResolving(long[] uuids, int[] counts, int n, String op) {
        int[] r = index.rows();
        PageIndex pg = index.pages();
        long[] t = records.words();
        long curKey = RowIndex.NO_PAGE_KEY;
        int base = -1;
        for (int i = 0; i < uuids.length; i++) {
            long id = uuids[i];
            long key = id >>> PAGE_BITS;
            if (key != curKey) {
                int p = pg.get(key);
                base = p < 0 ? -1 : p << PAGE_BITS;
                curKey = key;
            }
            int pos = base | (int) id & ROW_MASK;
            if (base < 0 || r[pos] == 0) {
                for (int j = 0; j < i; j++) {
                    t[(r[index.find(uuids[j])] - 1) << SHIFT] -= counts == null ? n : counts[j];
                }
                throw errors.unknown(id, op);
            }
            t[(r[pos] - 1) << SHIFT] += counts == null ? n : counts[i];
        }
    }

    @Override
    public boolean isRegistered(long id) {
        return records.has(entry(id, "is_registered"), MEM_REGISTERED);
    }

    @Override
    public void putTensor(long id, TensorPointerInfo info) {
        Descriptors.check(id, info, errors);
        if (index.find(id) >= 0) {
            throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, id, "put_tensor", "");
        }
        insert(info);
    }

    private void insert(TensorPointerInfo info) {
        int e = descriptors.copyIn(info);
        long id = info.uuid();
        long key = id >>> PAGE_BITS;
        int p = index.pageOf(key);
        if (p < 0) {
            p = index.newPage(key);
        }
        index.link(p << PAGE_BITS | (int) id & ROW_MASK, e);
    }

    @Override
    public boolean putTensorBatchColumns(ColumnarTensorInfo infos) {
        int n = infos.size();
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
            batchDtypes[k] = dtypeNames.id(infos.dtypeName(k));
        }
        int o = origins.intern(infos.sourceSessionId(), infos.sourceEntity(), infos.sourceNodeName(),
                infos.sourceGraphWalk(), infos.tpSize(), infos.tpRank());
        // The batch's layouts go in as one block, two bulk copies.
        int flatSize = infos.flatSize();
        int block = layouts.allocate(flatSize);
        long[] ls = layouts.store();
        System.arraycopy(dFlat, 0, ls, LayoutBlocks.dims(block), flatSize);
        System.arraycopy(sFlat, 0, ls, LayoutBlocks.dims(block) + flatSize, flatSize);
        long blockWord = (long) block << 32;
        // Holds the origin and the block across the batch so undoing a partial batch cannot free them under us.
        origins.use(o, 1);
        layouts.hold(block, 1);
        records.reserve(n);
        int[] free = records.freeStack();
        int top = records.top();
        int[] r = index.rows();
        PageIndex pg = index.pages();
        try {
            // One pass answers "held already?" and inserts, probing the page index once per page the batch spans.
            // A held uuid, or one repeated within the batch, undoes the rows already in, so a refused batch changes
            // nothing and the error names the first offending row, as the plain backend's would.
            long curKey = RowIndex.NO_PAGE_KEY;
            int base = 0;
            int flat = 0;
            // Rows linked on the current page and not yet on its count: settled once per run of the batch.
            int pageRun = 0;
            for (int i = 0; i < n; i++) {
                long id = ids[i];
                long key = id >>> PAGE_BITS;
                if (key != curKey) {
                    if (pageRun > 0) {
                        index.linked(base >>> PAGE_BITS, pageRun);
                        pageRun = 0;
                    }
                    int p = pg.get(key);
                    // A fresh page here is never left empty: this row goes in at once. It may grow the rows.
                    if (p < 0) {
                        p = index.newPage(key);
                        r = index.rows();
                    }
                    base = p << PAGE_BITS;
                    curKey = key;
                }
                int pos = base | (int) id & ROW_MASK;
                if (r[pos] != 0) {
                    // Settle the counts so the undo below sees them: the rows in so far hold their page, the
                    // origin and the block, and each unlink lets go of all three.
                    index.linked(base >>> PAGE_BITS, pageRun);
                    index.counted(i);
                    origins.use(o, i);
                    layouts.hold(block, i);
                    records.top(top);
                    for (int j = 0; j < i; j++) {
                        unlink(index.find(ids[j]));
                    }
                    throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, id, "put_tensor_batch", "");
                }
                int e = free[--top];
                records.write(e, o, batchDtypes[dts[i]], addrs[i], bytes[i], 0L, ranks[i], blockWord | flat);
                flat += ranks[i];
                r[pos] = e + 1;
                pageRun++;
            }
            if (pageRun > 0) {
                index.linked(base >>> PAGE_BITS, pageRun);
            }
            // Counted once for the batch rather than per row: one origin and one block, n uses each.
            index.counted(n);
            origins.use(o, n);
            layouts.hold(block, n);
            records.top(top);
        } finally {
            origins.release(o, 1);
            layouts.release(block, 1);
        }
        return true;
    }

    @Override
    public void registerShmSegment(int idx, String name) {
        segments.register(idx, name, errors);
    }

    @Override
    public void setMemRegistered(long id, boolean memRegistered) {
        records.flag(entry(id, "set_mem_registered"), MEM_REGISTERED, memRegistered);
    }

    @Override
    public void setPersist(long id, boolean persist) {
        records.flag(entry(id, "set_persist"), PERSIST, persist);
    }

    @Override
    public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
        if (uuids.length != segmentIdxs.length || uuids.length != offsets.length) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "set_shm_placement", "parallel arrays differ in length: " + uuids.length + ", "
                            + segmentIdxs.length + ", " + offsets.length);
        }
        int[] positions = index.scratch(uuids.length);
        for (int i = 0; i < uuids.length; i++) {
            int pos = index.find(uuids[i]);
            if (pos < 0) {
                throw errors.unknown(uuids[i], "set_shm_placement");
            }
            positions[i] = pos;
            int idx = segmentIdxs[i];
            if (idx != -1 && segments.registered(idx) < 0) {
                throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], "set_shm_placement",
                        "segment " + idx + " not registered");
            }
        }
        int[] r = index.rows();
        for (int i = 0; i < uuids.length; i++) {
            records.place(r[positions[i]] - 1, segmentIdxs[i] == -1 ? -1 : segments.registered(segmentIdxs[i]),
                    offsets[i]);
            forgetInfo(positions[i]);
        }
    }

    @Override
    public int liveCount() {
        return index.live();
    }

    @Override
    public boolean contains(long id) {
        return index.find(id) >= 0;
    }

    @Override
    public ReferenceInfo referenceInfo(long id) {
        return records.referenceInfo(entry(id, "reference_info"));
    }

    @Override
    public ErrorCounts errors() {
        return errors;
    }

    /** The index, for tests of its growth and of pages going with their last row. */
    RowIndex index() {
        return index;
    }

    /** The layout blocks, for tests that a batch's block goes with its last row and churn reuses blocks. */
    LayoutBlocks layouts() {
        return layouts;
    }

    /** The origins, for tests that walks ending release theirs. */
    Origins origins() {
        return origins;
    }
}
