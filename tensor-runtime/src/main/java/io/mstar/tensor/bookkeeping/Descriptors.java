package io.mstar.tensor.bookkeeping;

import java.util.List;

import io.mstar.graph.TensorPointerInfo;

/**
 * Descriptors into and out of the fast bookkeeper's entry records: a single put copies the caller's descriptor in
 * (the caller's object is not kept, so a later edit of it does not show through), a lookup builds one back out of the
 * record, its layout block, its origin and the interned names. Owned by the bookkeeper's thread.
 */
final class Descriptors {

    private final EntryRecords records;
    private final LayoutBlocks layouts;
    private final Origins origins;
    private final InternedNames dtypeNames;
    private final ArenaSegments segments;

    Descriptors(EntryRecords records, LayoutBlocks layouts, Origins origins, InternedNames dtypeNames,
            ArenaSegments segments) {
        this.records = records;
        this.layouts = layouts;
        this.origins = origins;
        this.dtypeNames = dtypeNames;
        this.segments = segments;
    }

    /** Refuses a descriptor that cannot be put under {@code id}: null, naming another uuid, or dims and strides apart. */
    static void check(long id, TensorPointerInfo info, ErrorCounts errors) {
        if (info == null || info.uuid() != id) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, id, "put_tensor",
                    "descriptor names another uuid");
        }
        if (info.dims().size() != info.stride().size()) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, id, "put_tensor",
                    "dims and stride differ in rank");
        }
    }

    /** A new entry holding {@code info}, with one use of its origin and of its own layout block counted. */
    int copyIn(TensorPointerInfo info) {
        int o = origins.intern(info.sourceSessionId(), info.sourceEntity(), info.sourceNodeName(),
                info.sourceGraphWalk(), info.sourceTpSize(), info.sourceTpRank());
        int rank = info.dims().size();
        int block = layouts.allocate(rank);
        long[] ls = layouts.store();
        int dims = LayoutBlocks.dims(block);
        for (int k = 0; k < rank; k++) {
            ls[dims + k] = info.dims().get(k);
            ls[dims + rank + k] = info.stride().get(k);
        }
        layouts.hold(block, 1);
        int e = records.take();
        records.write(e, o, dtypeNames.id(info.dtype()), info.address(), info.nbytes(), info.offset(), rank,
                (long) block << 32);
        origins.use(o, 1);
        // A consumer's record of a remote tensor arrives with the producer's segment name already on it.
        records.place(e, segments.id(info.shmSegment()), info.shmOffset());
        return e;
    }

    /** The descriptor of uuid {@code id}, whose record is entry {@code e}. */
    TensorPointerInfo build(long id, int e) {
        long[] t = records.words();
        int b = e << EntryRecords.SHIFT;
        long shape = t[b + EntryRecords.SHAPE];
        int rank = (int) shape;
        long layout = t[b + EntryRecords.LAYOUT];
        int block = (int) (layout >>> 32);
        int at = (int) (layout & EntryRecords.FLAT_OFFSET);
        int dims = LayoutBlocks.dims(block) + at;
        int strides = layouts.strides(block) + at;
        long[] ls = layouts.store();
        Long[] d = new Long[rank];
        Long[] s = new Long[rank];
        for (int k = 0; k < rank; k++) {
            d[k] = ls[dims + k];
            s[k] = ls[strides + k];
        }
        long ids = t[b + EntryRecords.IDS];
        Origins.Origin o = origins.get((int) (ids >>> 32));
        return new TensorPointerInfo(id, List.of(d), List.of(s), dtypeNames.name((int) ids), t[b + EntryRecords.NBYTES],
                t[b + EntryRecords.ADDRESS], t[b + EntryRecords.OFFSET], o.sessionId(), o.entity(), o.tpSize(),
                o.tpRank(), segments.name((int) (shape >> 32)), t[b + EntryRecords.SHM_OFFSET], o.nodeName(),
                o.graphWalk());
    }
}
