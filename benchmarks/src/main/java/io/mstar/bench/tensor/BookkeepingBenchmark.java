package io.mstar.bench.tensor;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.bookkeeping.Collectable;
import io.mstar.tensor.bookkeeping.ColumnarTensorInfo;
import io.mstar.tensor.bookkeeping.FastTensorBookkeeping;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The two bookkeeping paths the engine loop pays on every pass, plain backend vs fast in one run (the
 * {@code backend} parameter); report fast/plain ratios, not absolute figures.
 *
 * <ul>
 *   <li>{@link #storeHoldRelease}: one node's 64-tensor output batch as the worker handles it – stored (fast: the
 *   columns the caller fills while minting, then {@code putTensorBatchColumns}; plain: a descriptor per tensor,
 *   then {@code putTensorBatch}), the uniform +1 safety hold, then {@code dereferenceBatchUniform(cleanup)}
 *   releasing and forgetting all 64 – over a table already holding {@code resident} live tensors.</li>
 *   <li>{@link #storeHoldReleasePrebuilt}: the same three bookkeeping calls on inputs built in setup (a pool of
 *   {@value #POOL} batches, each backend's form), so the figure is the bookkeeping alone, not the caller's
 *   minting. Every batch is forgotten by its own release, so a pooled uuid is stored again only after it was
 *   dropped, {@value #POOL} batches later – legal, and far enough apart that no cache still holds it.</li>
 *   <li>{@link #getInfo}: descriptor lookups of 1024 random live uuids in a table of {@code resident}.</li>
 * </ul>
 * In {@link #storeHoldRelease} building the input is part of the measured work on both sides, as it is for the
 * caller: that is exactly the cost the columnar form exists to avoid.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BookkeepingBenchmark {

    static final int BATCH = 64;
    static final int LOOKUPS = 1024;
    static final int POOL = 64;

    @Param({"plain", "fast"})
    public String backend;

    /** Live tensors already in the table: a worker's working set, then one whose index no longer fits in cache. */
    @Param({"4096", "100000"})
    public int resident;

    private TensorBookkeeping book;
    private boolean columnar;
    private long nextUuid = 1L << 40;
    private final long[] batchUuids = new long[BATCH];
    private final long[] lookupUuids = new long[LOOKUPS];
    private ColumnarTensorInfo columns;

    /** Prebuilt inputs: POOL batches of fresh uuids, as columns (fast) or descriptors (plain). */
    private final long[][] poolIds = new long[POOL][];
    private final ColumnarTensorInfo[] poolColumns = new ColumnarTensorInfo[POOL];
    private final List<List<TensorPointerInfo>> poolInfos = new ArrayList<>();
    private int poolNext;

    /** The batch's layouts: what a node emits every pass (a template), in both forms. */
    private final long[][] dims = new long[BATCH][];
    private final long[][] strides = new long[BATCH][];
    private final List<List<Long>> dimsLists = new ArrayList<>();
    private final List<List<Long>> strideLists = new ArrayList<>();
    private final String[] dtypes = {"bfloat16", "float32", "int64"};

    @Setup
    public void setup() {
        book = backend.equals("fast") ? new FastTensorBookkeeping(resident) : new PlainTensorBookkeeping();
        columnar = book.hasPutTensorBatchColumns();
        columns = new ColumnarTensorInfo("10.0.0.1:7000", "worker-1", "llm", "walk-0", 1, 0);
        for (int i = 0; i < BATCH; i++) {
            dims[i] = new long[]{1, 128 + i, 4096};
            strides[i] = new long[]{(128L + i) * 4096, 4096, 1};
            dimsLists.add(List.of(dims[i][0], dims[i][1], dims[i][2]));
            strideLists.add(List.of(strides[i][0], strides[i][1], strides[i][2]));
        }
        SplittableRandom r = new SplittableRandom(42);
        long[] held = new long[resident];
        for (int i = 0; i < resident; i++) {
            long u = mint();
            held[i] = u;
            book.putTensor(u, descriptor(u, i % BATCH));
            book.incrementRef(u, 1);
        }
        for (int i = 0; i < LOOKUPS; i++) {
            lookupUuids[i] = held[r.nextInt(resident)];
        }
        for (int b = 0; b < POOL; b++) {
            ColumnarTensorInfo c = new ColumnarTensorInfo("10.0.0.1:7000", "worker-1", "llm", "walk-0", 1, 0);
            int[] dt = {c.dtypeIndex(dtypes[0]), c.dtypeIndex(dtypes[1]), c.dtypeIndex(dtypes[2])};
            List<TensorPointerInfo> infos = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                long u = mint();
                c.addRow(u, 0x7f00_0000_0000L + u * 64, 2L * dims[i][1] * 4096, 3, dims[i], strides[i], dt[i % 3]);
                infos.add(descriptor(u, i));
            }
            poolIds[b] = c.uuids();
            poolColumns[b] = c;
            poolInfos.add(infos);
        }
    }

    private long mint() {
        // Shaped like a real uuid: ordinal and incarnation high, a counter low.
        return (3L << 56) | (0x5a5a5L << 32) | nextUuid++;
    }

    private TensorPointerInfo descriptor(long uuid, int row) {
        return new TensorPointerInfo(uuid, dimsLists.get(row), strideLists.get(row), dtypes[row % 3],
                2L * dims[row][1] * 4096, 0x7f00_0000_0000L + uuid * 64, 0, "10.0.0.1:7000", "worker-1", 1, 0,
                null, 0, "llm", "walk-0");
    }

    @Benchmark
    public Collectable storeHoldRelease() {
        long[] ids = batchUuids;
        if (columnar) {
            ColumnarTensorInfo c = columns;
            c.clear();
            int[] dt = {c.dtypeIndex(dtypes[0]), c.dtypeIndex(dtypes[1]), c.dtypeIndex(dtypes[2])};
            for (int i = 0; i < BATCH; i++) {
                long u = mint();
                ids[i] = u;
                c.addRow(u, 0x7f00_0000_0000L + u * 64, 2L * dims[i][1] * 4096, 3, dims[i], strides[i], dt[i % 3]);
            }
            book.putTensorBatchColumns(c);
        } else {
            List<TensorPointerInfo> infos = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                long u = mint();
                ids[i] = u;
                infos.add(descriptor(u, i));
            }
            book.putTensorBatch(ids, infos);
        }
        book.incrementRefBatchUniform(ids, 1);
        return book.dereferenceBatchUniform(ids, 1, true);
    }

    @Benchmark
    public Collectable storeHoldReleasePrebuilt() {
        int b = poolNext;
        poolNext = (b + 1) % POOL;
        long[] ids = poolIds[b];
        if (columnar) {
            book.putTensorBatchColumns(poolColumns[b]);
        } else {
            book.putTensorBatch(ids, poolInfos.get(b));
        }
        book.incrementRefBatchUniform(ids, 1);
        return book.dereferenceBatchUniform(ids, 1, true);
    }

    @Benchmark
    @OperationsPerInvocation(LOOKUPS)
    public void getInfo(Blackhole bh) {
        TensorBookkeeping b = book;
        for (long u : lookupUuids) {
            bh.consume(b.getInfo(u));
        }
    }
}
