package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One node's output batch, marshalled as columns of primitives.
 *
 * <p>The fields above the columns are constant for the whole batch, so they cross into the bookkeeper once and
 * intern once instead of per tensor. {@code tpSize}/{@code tpRank} belong there too: the sharding group is a
 * property of the node and this rank, not of the request, so one batch – one node, one graph walk, one worker –
 * cannot be heterogeneous in them.
 *
 * <p>The caller fills the columns as it mints, so no {@link TensorPointerInfo} is built only to be torn apart
 * again. Columns are growable primitive arrays; {@code dims}/{@code stride} are flattened, row {@code i} owning
 * {@code ndims(i)} entries after those of the rows before it. Rows put this way have no read offset, no arena
 * placement yet ({@link TensorBookkeeping#setShmPlacement} stamps it) and the spec defaults for the rest.
 *
 * <p>Not thread-safe; owned by whoever is filling it. {@link #clear()} keeps the capacity for the next batch.
 */
public final class ColumnarTensorInfo {

    /** The description of one tensor a caller already has in hand (Java's stand-in for a canonical tensor). */
    public record Canonical(long[] dims, long[] stride, String dtype, long nbytes, long address) {
        public Canonical {
            Objects.requireNonNull(dims, "dims");
            Objects.requireNonNull(stride, "stride");
            Objects.requireNonNull(dtype, "dtype");
            if (dims.length != stride.length) {
                throw new IllegalArgumentException("dims and stride differ in rank: " + dims.length + " vs " + stride.length);
            }
        }
    }

    private final String sourceSessionId;
    private final String sourceEntity;
    private final String sourceNodeName;
    private final String sourceGraphWalk;
    private final int tpSize;
    private final int tpRank;

    private long[] uuids = new long[16];
    private long[] addresses = new long[16];
    private long[] nbytes = new long[16];
    private int[] ndims = new int[16];
    private int[] dtypeIdx = new int[16];
    private int rows;
    private long[] dimsFlat = new long[64];
    private long[] strideFlat = new long[64];
    private int flat;
    private final List<String> dtypeNames = new ArrayList<>(4);

    /**
     * @param sourceSessionId where the producer's tensor server listens, {@code host:port}
     * @param sourceEntity    the entity holding the tensors
     * @param sourceNodeName  node that produced them, nullable
     * @param sourceGraphWalk walk in which they were produced, nullable
     */
    public ColumnarTensorInfo(String sourceSessionId, String sourceEntity, String sourceNodeName,
                              String sourceGraphWalk, int tpSize, int tpRank) {
        this.sourceSessionId = Objects.requireNonNull(sourceSessionId, "source_session_id");
        this.sourceEntity = Objects.requireNonNull(sourceEntity, "source_entity");
        this.sourceNodeName = sourceNodeName;
        this.sourceGraphWalk = sourceGraphWalk;
        this.tpSize = tpSize;
        this.tpRank = tpRank;
    }

    /**
     * One tensor whose layout is already known (a row of a template): its entry in every column, in the layout's
     * order. {@code dims}/{@code stride} hold at least {@code ndims} entries; the rest is ignored.
     */
    public void addRow(long uuid, long address, long nbytes, int ndims, long[] dims, long[] stride, int dtypeIdx) {
        if (ndims < 0 || dims.length < ndims || stride.length < ndims) {
            throw new IllegalArgumentException("row " + uuid + ": ndims " + ndims + " but dims " + dims.length + ", stride " + stride.length);
        }
        if (dtypeIdx < 0 || dtypeIdx >= dtypeNames.size()) {
            throw new IllegalArgumentException("row " + uuid + ": dtype index " + dtypeIdx + " not registered (dtypeIndex first)");
        }
        if (rows == uuids.length) {
            int cap = rows * 2;
            uuids = Arrays.copyOf(uuids, cap);
            addresses = Arrays.copyOf(addresses, cap);
            this.nbytes = Arrays.copyOf(this.nbytes, cap);
            this.ndims = Arrays.copyOf(this.ndims, cap);
            this.dtypeIdx = Arrays.copyOf(this.dtypeIdx, cap);
        }
        if (flat + ndims > dimsFlat.length) {
            int cap = Math.max(dimsFlat.length * 2, flat + ndims);
            dimsFlat = Arrays.copyOf(dimsFlat, cap);
            strideFlat = Arrays.copyOf(strideFlat, cap);
        }
        uuids[rows] = uuid;
        addresses[rows] = address;
        this.nbytes[rows] = nbytes;
        this.ndims[rows] = ndims;
        this.dtypeIdx[rows] = dtypeIdx;
        // A loop, not arraycopy: a row is three or four longs, less than the intrinsic's setup costs.
        long[] df = dimsFlat;
        long[] sf = strideFlat;
        for (int k = 0; k < ndims; k++) {
            df[flat + k] = dims[k];
            sf[flat + k] = stride[k];
        }
        flat += ndims;
        rows++;
    }

    /** Rows for tensors described one by one; {@code uuids[i]} names {@code canonicals.get(i)}. */
    public void addTensorsCanonical(long[] uuids, List<Canonical> canonicals) {
        if (uuids.length != canonicals.size()) {
            throw new IllegalArgumentException("uuids and canonicals differ in length: " + uuids.length + " vs " + canonicals.size());
        }
        for (int i = 0; i < uuids.length; i++) {
            Canonical c = canonicals.get(i);
            addRow(uuids[i], c.address(), c.nbytes(), c.dims().length, c.dims(), c.stride(), dtypeIndex(c.dtype()));
        }
    }

    /** The batch-local index of {@code dtype}, registering it on first use. */
    public int dtypeIndex(String dtype) {
        Objects.requireNonNull(dtype, "dtype");
        // A batch holds a handful of dtypes at most: a scan beats hashing.
        for (int i = 0; i < dtypeNames.size(); i++) {
            if (dtypeNames.get(i).equals(dtype)) {
                return i;
            }
        }
        dtypeNames.add(dtype);
        return dtypeNames.size() - 1;
    }

    /** Empties the columns, keeping their capacity and the batch constants. */
    public void clear() {
        rows = 0;
        flat = 0;
        dtypeNames.clear();
    }

    /**
     * The descriptors these rows stand for, for a bookkeeper that stores descriptors by reference (and so
     * declines {@link TensorBookkeeping#putTensorBatchColumns}).
     */
    public List<TensorPointerInfo> toPointerInfos() {
        List<TensorPointerInfo> out = new ArrayList<>(rows);
        int off = 0;
        for (int i = 0; i < rows; i++) {
            List<Long> d = new ArrayList<>(ndims[i]);
            List<Long> s = new ArrayList<>(ndims[i]);
            for (int k = 0; k < ndims[i]; k++) {
                d.add(dimsFlat[off + k]);
                s.add(strideFlat[off + k]);
            }
            off += ndims[i];
            out.add(new TensorPointerInfo(uuids[i], d, s, dtypeNames.get(dtypeIdx[i]), nbytes[i], addresses[i], 0L,
                    sourceSessionId, sourceEntity, tpSize, tpRank, null, 0L, sourceNodeName, sourceGraphWalk));
        }
        return out;
    }

    public int size() {
        return rows;
    }

    /** A copy of the uuid column, in row order. */
    public long[] uuids() {
        return Arrays.copyOf(uuids, rows);
    }

    public long uuid(int row) {
        return uuids[Objects.checkIndex(row, rows)];
    }

    public long address(int row) {
        return addresses[Objects.checkIndex(row, rows)];
    }

    public long nbytes(int row) {
        return nbytes[Objects.checkIndex(row, rows)];
    }

    public int ndims(int row) {
        return ndims[Objects.checkIndex(row, rows)];
    }

    public int dtypeIdx(int row) {
        return dtypeIdx[Objects.checkIndex(row, rows)];
    }

    /** Number of entries in the flattened dims/stride columns. */
    public int flatSize() {
        return flat;
    }

    public long dimsFlat(int i) {
        return dimsFlat[Objects.checkIndex(i, flat)];
    }

    public long strideFlat(int i) {
        return strideFlat[Objects.checkIndex(i, flat)];
    }

    public List<String> dtypeNames() {
        return List.copyOf(dtypeNames);
    }

    public int dtypeCount() {
        return dtypeNames.size();
    }

    public String dtypeName(int idx) {
        return dtypeNames.get(idx);
    }

    public String sourceSessionId() {
        return sourceSessionId;
    }

    public String sourceEntity() {
        return sourceEntity;
    }

    public String sourceNodeName() {
        return sourceNodeName;
    }

    public String sourceGraphWalk() {
        return sourceGraphWalk;
    }

    public int tpSize() {
        return tpSize;
    }

    public int tpRank() {
        return tpRank;
    }

    // Package-private views of the backing arrays for the fast bookkeeper's bulk copy; valid up to size()/flatSize().
    long[] uuidColumn() {
        return uuids;
    }

    long[] addressColumn() {
        return addresses;
    }

    long[] nbytesColumn() {
        return nbytes;
    }

    int[] ndimsColumn() {
        return ndims;
    }

    int[] dtypeIdxColumn() {
        return dtypeIdx;
    }

    long[] dimsFlatColumn() {
        return dimsFlat;
    }

    long[] strideFlatColumn() {
        return strideFlat;
    }
}
