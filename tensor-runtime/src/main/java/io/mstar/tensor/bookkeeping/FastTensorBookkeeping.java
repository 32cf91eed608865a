package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.Arrays;
import java.util.List;

/**
 * The fast bookkeeper: a two-level index over {@code long} uuids into dense entry records – the reference count,
 * flags and every descriptor field but the layout packed into 8 consecutive longs of one array, the dims and strides
 * of a whole batch in one {@link LayoutBlocks} block – so the hot paths (a batch put, the uniform safety hold, the
 * batched dereference) box nothing and allocate nothing per tensor.
 *
 * <p>The index: uuids are ordinal | incarnation | counter and one node's output batch is a run of consecutive
 * counters, so a uuid is split into a page key (all but the low 6 bits) and a row within the
 * page. {@link PageIndex} maps page keys to pages; a page is 64 row slots naming entries. A batch
 * then costs one or two hash probes instead of one per tensor, and pages, like entries, are recycled from a LIFO
 * free list, so a fresh batch lands on memory the batch before it just released rather than on a cold slot that a
 * hash of a never-seen uuid picked. A page goes back when its last row does, so a scattered population costs a
 * page of row slots and cached-descriptor slots (about 512 bytes) per live uuid at worst, never a page of entry
 * records.
 *
 * <p>The fields constant across one node's output batch (session, entity, node, walk, tp size and rank) are
 * interned once per batch as an "origin" shared by its rows ({@link Origins}), reference-counted so that walks which
 * end release theirs; dtype and segment names are interned for good ({@link InternedNames}; there are a handful).
 *
 * <p>A descriptor handed in is COPIED into its entry record, unlike {@link PlainTensorBookkeeping}, which keeps the
 * caller's object. Anything relying on a later edit of the descriptor (register-for-send stamping the arena
 * placement) has to write it back with {@link #setShmPlacement}; {@link #getInfo} builds a
 * {@link TensorPointerInfo} from the record on first ask (the segment name from {@link #registerShmSegment}) and
 * hands the same one out until the record changes.
 *
 * <p>Owned by the engine loop; not thread-safe. Observably identical to the plain backend (held to it by the
 * differential test), including which error a malformed batch raises first.
 */
public final class FastTensorBookkeeping implements TensorBookkeeping {

    /**
     * An entry is 8 consecutive longs of {@code ent} (about one cache line) rather than a slot in
     * a dozen parallel columns: a put writes one place instead of a dozen arrays, each with its own bounds check.
     */
    private static final int ENTRY_SHIFT = 3;
    private static final int ENTRY_LONGS = 1 << ENTRY_SHIFT;
    private static final int REF = 0;
    private static final int ADDRESS = 1;
    private static final int NBYTES = 2;
    private static final int OFFSET = 3;
    private static final int SHM_OFFSET = 4;
    /** origin id in the high half, dtype id in the low half. */
    private static final int IDS = 5;
    /** arena segment id (-1: none) in the high half, rank in the low half. */
    private static final int SHAPE = 6;
    /**
     * The {@link LayoutBlocks} block holding the dims and strides in the high half; the flags and the row's offset
     * within the block in the low half (a block holds fewer than 2^29 values, so the top two bits are free).
     */
    private static final int LAYOUT = 7;
    private static final long PERSIST = 1L << 30;
    private static final long MEM_REGISTERED = 1L << 31;
    private static final long FLAT_OFFSET = (1L << 30) - 1;
    /** Low uuid bits that pick the row within a page. */
    static final int PAGE_BITS = 6;
    static final int PAGE = 1 << PAGE_BITS;
    private static final int ROW_MASK = PAGE - 1;
    /** No page key is this: page keys are {@code uuid >>> PAGE_BITS}, so their top bits are clear. */
    private static final long NO_PAGE_KEY = -1L;

    private final ErrorCounts errors = new ErrorCounts();

    // ---- index: page key -> page; (page << PAGE_BITS | row) -> entry + 1, 0 where none ----
    private final PageIndex pages;
    private int pageCap;
    private int pageHigh;
    private int[] rows;
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
    private int[] pageLive;
    private long[] pageKey;
    private int[] freePages;
    private int freePageTop;
    private int live;

    // ---- entry records, indexed by entry number; free entries are stacked in freeEntries ----
    private int entryCap;
    private int entryHigh;
    private int[] freeEntries;
    private int freeTop;
    private long[] ent;
    private int[] stamp;
    private final LayoutBlocks layouts;

    // ---- batch scratch: row positions resolved by a batch's validation pass, applied by the next ----
    private int[] scratch = new int[64];
    private long[] outUuids = new long[64];
    private boolean[] outRegistered = new boolean[64];
    private int epoch = 1;
    /** Whether the uuids resolveAll last resolved were strictly increasing, hence distinct. */
    private boolean resolvedIncreasing;

    // ---- interning ----
    private final Origins origins = new Origins();
    private final InternedNames dtypeNames = new InternedNames();
    private int[] batchDtypes = new int[8];
    /** Registered arena segment index -> id in segmentNames, -1 where none. */
    private int[] segments = filled(8);
    /** Every segment name seen: registered ones and those on descriptors put from peers. Bounded by segments. */
    private final InternedNames segmentNames = new InternedNames();

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
        int expectedPages = Math.max(4, expected / PAGE * 2);
        pages = new PageIndex(expectedPages);
        allocatePages(expectedPages);
        allocateEntries(Math.max(16, expected));
        layouts = new LayoutBlocks(Math.max(16, expected) * 8);
    }

    private void allocatePages(int cap) {
        pageCap = cap;
        rows = grow(rows, cap * PAGE);
        infoByRow = infoByRow == null ? new TensorPointerInfo[cap * PAGE] : Arrays.copyOf(infoByRow, cap * PAGE);
        lookupInfos = new TensorPointerInfo[Integer.highestOneBit(cap * PAGE - 1) << 1];
        pageLive = grow(pageLive, cap);
        pageKey = grow(pageKey, cap);
        freePages = grow(freePages, cap);
    }

    private void allocateEntries(int cap) {
        entryCap = cap;
        freeEntries = grow(freeEntries, cap);
        ent = grow(ent, cap * ENTRY_LONGS);
        stamp = grow(stamp, cap);
    }

    private static long[] grow(long[] a, int cap) {
        return a == null ? new long[cap] : Arrays.copyOf(a, cap);
    }

    private static int[] grow(int[] a, int cap) {
        return a == null ? new int[cap] : Arrays.copyOf(a, cap);
    }

    // ---- pages ----

    /** A page for {@code key}, which has none: the one released last, so its rows are still in cache. */
    private int newPage(long key) {
        int p;
        if (freePageTop > 0) {
            p = freePages[--freePageTop];
        } else {
            if (pageHigh == pageCap) {
                allocatePages(pageCap * 2);
            }
            p = pageHigh++;
        }
        pageKey[p] = key;
        pages.putAbsent(key, p);
        return p;
    }

    /** The row position of {@code id}, or -1 when it has no record. */
    private int find(long id) {
        int p = pages.get(id >>> PAGE_BITS);
        if (p < 0) {
            return -1;
        }
        int pos = p << PAGE_BITS | (int) id & ROW_MASK;
        return rows[pos] == 0 ? -1 : pos;
    }

    /** Maps the empty row position {@code pos} to entry {@code e}. */
    private void link(int pos, int e) {
        rows[pos] = e + 1;
        pageLive[pos >>> PAGE_BITS]++;
        live++;
    }

    /** Drops the record at row position {@code pos}, its entry and, with its last row, its page. */
    private void unlink(int pos) {
        int b = unlinkRow(pos) << ENTRY_SHIFT;
        origins.release((int) (ent[b + IDS] >>> 32), 1);
        layouts.release((int) (ent[b + LAYOUT] >>> 32), 1);
    }

    /** {@link #unlink} but for the entry's uses of its origin and layout block, which the caller lets go of. */
    private int unlinkRow(int pos) {
        live--;
        releaseRows(pos >>> PAGE_BITS, 1);
        return clearRow(pos);
    }

    /** Takes {@code n} rows off page {@code p}'s count, giving the page back with its last one. */
    private void releaseRows(int p, int n) {
        if ((pageLive[p] -= n) == 0) {
            pages.remove(pageKey[p]);
            freePages[freePageTop++] = p;
        }
    }

    /** Empties row position {@code pos} and frees its entry, leaving the counts to the caller. */
    private int clearRow(int pos) {
        int e = rows[pos] - 1;
        rows[pos] = 0;
        forgetInfo(pos);
        freeEntries[freeTop++] = e;
        return e;
    }

    // ---- entries ----

    /**
     * A recycled or new entry, every word written (a recycled one keeps its last tenant's); the caller counts its
     * uses of {@code originId} and of the layout block named in {@code layout}.
     */
    private int newEntry(int originId, int dtypeId, long addr, long bytes, long off, int rank, long layout) {
        reserveEntries(1);
        int e = freeEntries[--freeTop];
        writeEntry(e, originId, dtypeId, addr, bytes, off, rank, layout);
        return e;
    }

    /**
     * Makes sure {@code n} entries can be popped off the free stack, stacking never-used ones as needed, so a batch
     * pops them with no per-row check and keeps the stack's top in a local rather than in a field it loads and stores
     * back for every row.
     */
    private void reserveEntries(int n) {
        while (freeTop < n) {
            if (entryHigh == entryCap) {
                allocateEntries(entryCap * 2);
            }
            freeEntries[freeTop++] = entryHigh++;
        }
    }

    private void writeEntry(int e, int originId, int dtypeId, long addr, long bytes, long off, int rank, long layout) {
        long[] t = ent;
        int b = e << ENTRY_SHIFT;
        t[b + REF] = 0;
        t[b + ADDRESS] = addr;
        t[b + NBYTES] = bytes;
        t[b + OFFSET] = off;
        t[b + SHM_OFFSET] = 0;
        t[b + IDS] = (long) originId << 32 | dtypeId;
        t[b + SHAPE] = -1L << 32 | rank;
        t[b + LAYOUT] = layout;
    }

    private void setPlacement(int e, int segmentId, long shmOffset) {
        int b = e << ENTRY_SHIFT;
        ent[b + SHAPE] = (long) segmentId << 32 | (ent[b + SHAPE] & 0xFFFF_FFFFL);
        ent[b + SHM_OFFSET] = shmOffset;
    }

    // ---- interning ----

    // ---- lookups ----

    private int entry(long id, String op) {
        int pos = find(id);
        if (pos < 0) {
            throw errors.unknown(id, op);
        }
        return rows[pos] - 1;
    }

    /**
     * Resolves every uuid to its row position in scratch (growing it), failing on the first unknown one. A run of
     * uuids on one page (a batch) probes the page index once.
     */
    private int[] resolveAll(long[] uuids, String op) {
        if (scratch.length < uuids.length) {
            scratch = new int[Math.max(uuids.length, scratch.length * 2)];
        }
        int[] s = scratch;
        int[] r = rows;
        long curKey = NO_PAGE_KEY;
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
                int p = pages.get(key);
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
        if (++epoch == Integer.MAX_VALUE) {
            Arrays.fill(stamp, 0);
            epoch = 1;
        }
        for (int i = 0; i < uuids.length; i++) {
            int e = rows[positions[i]] - 1;
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
        int b = entry(id, "can_gc") << ENTRY_SHIFT;
        return ent[b + REF] <= 0 && (ent[b + LAYOUT] & PERSIST) == 0;
    }

    @Override
    public void dereference(long id, int n) {
        ent[entry(id, "dereference") << ENTRY_SHIFT] -= n;
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
        int[] r = rows;
        // A batch's rows share an origin, a layout block and a page or two: their counts are settled once per run
        // of rows, not per row.
        int runOrigin = -1;
        int run = 0;
        int runBlock = -1;
        int blockRun = 0;
        int runPage = -1;
        int pageRun = 0;
        long[] t = ent;
        int[] free = freeEntries;
        int top = freeTop;
        for (int i = 0; i < uuids.length; i++) {
            int pos = positions[i];
            int e = r[pos] - 1;
            int b = e << ENTRY_SHIFT;
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
                            releaseRows(runPage, pageRun);
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
        freeTop = top;
        if (blockRun > 0) {
            layouts.release(runBlock, blockRun);
            origins.release(runOrigin, run + blockRun);
        }
        if (pageRun > 0) {
            releaseRows(runPage, pageRun);
        }
        if (cleanup) {
            live -= found;
        }
        // Gathered in reused scratch and copied out at the exact length: allocating the answer up front and
        // filling it cost a zeroing pass and a growth check per uuid, about a tenth of a whole batch.
        return found == 0 ? Collectable.NONE
                : new Collectable(Arrays.copyOf(ou, found), Arrays.copyOf(or, found));
    }

    @Override
    public void forgetTensor(long id) {
        int pos = find(id);
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
        int p = pages.get(id >>> PAGE_BITS);
        if (p < 0) {
            return null;
        }
        int pos = p << PAGE_BITS | (int) id & ROW_MASK;
        TensorPointerInfo cached = infoByRow[pos];
        if (cached != null) {
            return cached;
        }
        if (rows[pos] == 0) {
            return null;
        }
        return infoByRow[pos] = build(id, rows[pos] - 1);
    }

    private TensorPointerInfo build(long id, int e) {
        long[] t = ent;
        int b = e << ENTRY_SHIFT;
        long shape = t[b + SHAPE];
        int rank = (int) shape;
        long layout = t[b + LAYOUT];
        int block = (int) (layout >>> 32);
        int at = (int) (layout & FLAT_OFFSET);
        int dims = LayoutBlocks.dims(block) + at;
        int strides = layouts.strides(block) + at;
        long[] ls = layouts.store();
        Long[] d = new Long[rank];
        Long[] s = new Long[rank];
        for (int k = 0; k < rank; k++) {
            d[k] = ls[dims + k];
            s[k] = ls[strides + k];
        }
        long ids = t[b + IDS];
        Origins.Origin o = origins.get((int) (ids >>> 32));
        int seg = (int) (shape >> 32);
        return new TensorPointerInfo(id, List.of(d), List.of(s), dtypeNames.name((int) ids), t[b + NBYTES],
                t[b + ADDRESS], t[b + OFFSET], o.sessionId(), o.entity(), o.tpSize(), o.tpRank(),
                seg < 0 ? null : segmentNames.name(seg), t[b + SHM_OFFSET], o.nodeName(), o.graphWalk());
    }

    @Override
    public boolean hasPutTensorBatchColumns() {
        return true;
    }

    @Override
    public void incrementRef(long id, int n) {
        ent[entry(id, "increment_ref") << ENTRY_SHIFT] += n;
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
        int[] r = rows;
        long[] t = ent;
        long curKey = NO_PAGE_KEY;
        int base = -1;
        for (int i = 0; i < uuids.length; i++) {
            long id = uuids[i];
            long key = id >>> PAGE_BITS;
            if (key != curKey) {
                int p = pages.get(key);
                base = p < 0 ? -1 : p << PAGE_BITS;
                curKey = key;
            }
            int pos = base | (int) id & ROW_MASK;
            if (base < 0 || r[pos] == 0) {
                for (int j = 0; j < i; j++) {
                    t[(r[find(uuids[j])] - 1) << ENTRY_SHIFT] -= counts == null ? n : counts[j];
                }
                throw errors.unknown(id, op);
            }
            t[(r[pos] - 1) << ENTRY_SHIFT] += counts == null ? n : counts[i];
        }
    }

    @Override
    public boolean isRegistered(long id) {
        return (ent[(entry(id, "is_registered") << ENTRY_SHIFT) + LAYOUT] & MEM_REGISTERED) != 0;
    }

    @Override
    public void putTensor(long id, TensorPointerInfo info) {
        if (info == null || info.uuid() != id) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, id, "put_tensor", "descriptor names another uuid");
        }
        if (info.dims().size() != info.stride().size()) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, id, "put_tensor", "dims and stride differ in rank");
        }
        if (find(id) >= 0) {
            throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, id, "put_tensor", "");
        }
        insert(info);
    }

    private void insert(TensorPointerInfo info) {
        int o = origins.intern(info.sourceSessionId(), info.sourceEntity(), info.sourceNodeName(),
                info.sourceGraphWalk(), info.sourceTpSize(), info.sourceTpRank());
        // Not cached here: the copy is the point (a later edit of the caller's object must not show through).
        int rank = info.dims().size();
        int block = layouts.allocate(rank);
        long[] ls = layouts.store();
        int dims = LayoutBlocks.dims(block);
        for (int k = 0; k < rank; k++) {
            ls[dims + k] = info.dims().get(k);
            ls[dims + rank + k] = info.stride().get(k);
        }
        layouts.hold(block, 1);
        int e = newEntry(o, dtypeNames.id(info.dtype()), info.address(), info.nbytes(), info.offset(), rank,
                (long) block << 32);
        origins.use(o, 1);
        // A consumer's record of a remote tensor arrives with the producer's segment name already on it.
        setPlacement(e, info.shmSegment() == null ? -1 : segmentNames.id(info.shmSegment()), info.shmOffset());
        long id = info.uuid();
        long key = id >>> PAGE_BITS;
        int p = pages.get(key);
        if (p < 0) {
            p = newPage(key);
        }
        link(p << PAGE_BITS | (int) id & ROW_MASK, e);
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
        reserveEntries(n);
        int[] free = freeEntries;
        int top = freeTop;
        try {
            // One pass answers "held already?" and inserts, probing the page index once per page the batch spans.
            // A held uuid, or one repeated within the batch, undoes the rows already in, so a refused batch changes
            // nothing and the error names the first offending row, as the plain backend's would.
            long curKey = NO_PAGE_KEY;
            int base = 0;
            int flat = 0;
            // Rows linked on the current page and not yet on its count: settled once per run of the batch.
            int pageRun = 0;
            for (int i = 0; i < n; i++) {
                long id = ids[i];
                long key = id >>> PAGE_BITS;
                if (key != curKey) {
                    if (pageRun > 0) {
                        pageLive[base >>> PAGE_BITS] += pageRun;
                        pageRun = 0;
                    }
                    int p = pages.get(key);
                    // A fresh page here is never left empty: this row goes in at once.
                    base = (p < 0 ? newPage(key) : p) << PAGE_BITS;
                    curKey = key;
                }
                int pos = base | (int) id & ROW_MASK;
                if (rows[pos] != 0) {
                    // Settle the counts so the undo below sees them: the rows in so far hold their page, the
                    // origin and the block, and each unlink lets go of all three.
                    pageLive[base >>> PAGE_BITS] += pageRun;
                    live += i;
                    origins.use(o, i);
                    layouts.hold(block, i);
                    freeTop = top;
                    for (int j = 0; j < i; j++) {
                        unlink(find(ids[j]));
                    }
                    throw errors.raise(TensorStoreException.Reason.DUPLICATE_UUID, id, "put_tensor_batch", "");
                }
                int e = free[--top];
                writeEntry(e, o, batchDtypes[dts[i]], addrs[i], bytes[i], 0L, ranks[i], blockWord | flat);
                flat += ranks[i];
                rows[pos] = e + 1;
                pageRun++;
            }
            if (pageRun > 0) {
                pageLive[base >>> PAGE_BITS] += pageRun;
            }
            // Counted once for the batch rather than per row: one origin and one block, n uses each.
            live += n;
            origins.use(o, n);
            layouts.hold(block, n);
            freeTop = top;
        } finally {
            origins.release(o, 1);
            layouts.release(block, 1);
        }
        return true;
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
        if (current >= 0 && !segmentNames.name(current).equals(name)) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "segment " + idx + " is already " + segmentNames.name(current) + ", not "
                            + name);
        }
        segments[idx] = segmentNames.id(name);
    }

    @Override
    public void setMemRegistered(long id, boolean memRegistered) {
        int e = entry(id, "set_mem_registered");
        int b = (e << ENTRY_SHIFT) + LAYOUT;
        ent[b] = memRegistered ? ent[b] | MEM_REGISTERED : ent[b] & ~MEM_REGISTERED;
    }

    @Override
    public void setPersist(long id, boolean persist) {
        int e = entry(id, "set_persist");
        int b = (e << ENTRY_SHIFT) + LAYOUT;
        ent[b] = persist ? ent[b] | PERSIST : ent[b] & ~PERSIST;
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
        int[] positions = scratch;
        for (int i = 0; i < uuids.length; i++) {
            int pos = find(uuids[i]);
            if (pos < 0) {
                throw errors.unknown(uuids[i], "set_shm_placement");
            }
            positions[i] = pos;
            int idx = segmentIdxs[i];
            if (idx != -1 && (idx < 0 || idx >= segments.length || segments[idx] < 0)) {
                throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, uuids[i], "set_shm_placement",
                        "segment " + idx + " not registered");
            }
        }
        for (int i = 0; i < uuids.length; i++) {
            int e = rows[positions[i]] - 1;
            setPlacement(e, segmentIdxs[i] == -1 ? -1 : segments[segmentIdxs[i]], offsets[i]);
            forgetInfo(positions[i]);
        }
    }

    @Override
    public int liveCount() {
        return live;
    }

    @Override
    public boolean contains(long id) {
        return find(id) >= 0;
    }

    @Override
    public ReferenceInfo referenceInfo(long id) {
        int b = entry(id, "reference_info") << ENTRY_SHIFT;
        long f = ent[b + LAYOUT];
        return new ReferenceInfo(ent[b + REF], (f & PERSIST) != 0, (f & MEM_REGISTERED) != 0);
    }

    @Override
    public ErrorCounts errors() {
        return errors;
    }

    /** Page index slots, for tests of growth. */
    int indexCapacity() {
        return pages.capacity();
    }

    /** Times the page index grew. */
    int indexRebuilds() {
        return pages.rebuilds();
    }

    /** Pages mapped now, for tests that a page goes with its last row. */
    int livePages() {
        return pages.size();
    }

    /** Pages ever allocated (live or on the free list), for tests that churn recycles them. */
    int allocatedPages() {
        return pageHigh;
    }

    /** Layout blocks held now, for tests that a batch's block goes with its last row. */
    int liveLayoutBlocks() {
        return layouts.liveBlocks();
    }

    /** Layout longs ever handed out, for tests that churn reuses blocks. */
    int allocatedLayoutLongs() {
        return layouts.allocatedLongs();
    }

    /** Origins interned now, for tests that walks ending release theirs. */
    int internedOrigins() {
        return origins.size();
    }
}
