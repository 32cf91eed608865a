package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What only the fast backend has: copying descriptors in, growth, page recycling, interning. */
class FastTensorBookkeepingTests {

    @Test
    void descriptorsAreCopiedInWhereThePlainBackendKeepsTheCallersObject() {
        TensorPointerInfo info = BookkeepingContractTests.info(1);
        FastTensorBookkeeping fast = new FastTensorBookkeeping();
        PlainTensorBookkeeping plain = new PlainTensorBookkeeping();
        fast.putTensor(1, info);
        plain.putTensor(1, info);
        assertThat(plain.getInfo(1)).isSameAs(info);
        assertThat(fast.getInfo(1)).isEqualTo(info).isNotSameAs(info);
        assertThat(fast.getInfo(1)).as("built once, then kept").isSameAs(fast.getInfo(1));
        fast.registerShmSegment(0, "seg-0");
        fast.setShmPlacement(new long[]{1}, new int[]{0}, new long[]{8});
        assertThat(fast.getInfo(1).shmSegment()).as("a placement write-back drops the kept one").isEqualTo("seg-0");
    }

    @Test
    void uuidsSharingTheirLowBitsEachGetTheirOwnDescriptorAndNeverAStaleOne() {
        FastTensorBookkeeping b = new FastTensorBookkeeping(64);
        long a = 5;
        long c = 5 | 1L << 40;
        b.putTensor(a, sized(a, 1));
        b.putTensor(c, sized(c, 2));
        for (int i = 0; i < 3; i++) {
            assertThat(b.getInfo(a).nbytes()).isEqualTo(1);
            assertThat(b.getInfo(c).nbytes()).isEqualTo(2);
        }
        TensorPointerInfo kept = b.getInfo(c);
        b.getInfo(a);
        assertThat(b.getInfo(c)).as("displaced from the direct-mapped slot, still built only once").isSameAs(kept);
        b.forgetTensor(c);
        assertThat(b.getInfo(c)).isNull();
        b.putTensor(c, sized(c, 3));
        assertThat(b.getInfo(c).nbytes()).as("the new incarnation, not the one looked up before").isEqualTo(3);
        b.registerShmSegment(0, "seg-0");
        b.setShmPlacement(new long[]{c}, new int[]{0}, new long[]{8});
        assertThat(b.getInfo(c).shmSegment()).isEqualTo("seg-0");
        assertThat(b.getInfo(a).shmSegment()).isNull();
    }

    private static TensorPointerInfo sized(long uuid, long nbytes) {
        return new TensorPointerInfo(uuid, List.of(nbytes), List.of(1L), "int8", nbytes, 0, "h:1", "worker-0");
    }

    @Test
    void theIndexGrowsFromATinyStartAndKeepsEveryEntry() {
        FastTensorBookkeeping b = new FastTensorBookkeeping(1);
        int start = b.index().indexCapacity();
        for (long u = 1; u <= 50_000; u++) {
            b.putTensor(u << 20, new TensorPointerInfo(u << 20, List.of(u), List.of(1L), "int8", u, u, "h:1", "worker-0"));
        }
        assertThat(b.index().indexCapacity()).isGreaterThan(start).isLessThanOrEqualTo(4 * 65_536);
        for (long u = 1; u <= 50_000; u++) {
            assertThat(b.getInfo(u << 20).nbytes()).isEqualTo(u);
        }
    }

    @Test
    void churnAtASteadyPopulationRecyclesPagesInsteadOfGrowing() {
        FastTensorBookkeeping b = new FastTensorBookkeeping(1024);
        ColumnarTensorInfo cols = new ColumnarTensorInfo("h:1", "worker-0", "llm", "walk", 1, 0);
        long next = 1;
        int capacityAfterWarmup = -1;
        int pagesAfterWarmup = -1;
        for (int round = 0; round < 2_000; round++) {
            cols.clear();
            int f = cols.dtypeIndex("bfloat16");
            for (int i = 0; i < 64; i++) {
                cols.addRow(next++, 0, 2, 1, new long[]{1}, new long[]{1}, f);
            }
            b.putTensorBatchColumns(cols);
            long[] ids = cols.uuids();
            b.incrementRefBatchUniform(ids, 1);
            assertThat(b.dereferenceBatchUniform(ids, 1, true).size()).isEqualTo(64);
            assertThat(b.index().livePages()).as("a released batch gives its pages back").isZero();
            if (round == 10) {
                capacityAfterWarmup = b.index().indexCapacity();
                pagesAfterWarmup = b.index().allocatedPages();
            }
        }
        assertThat(b.liveCount()).isZero();
        assertThat(b.index().indexCapacity()).isEqualTo(capacityAfterWarmup);
        assertThat(b.index().allocatedPages()).as("2,000 batches ran on the same recycled pages")
                .isEqualTo(pagesAfterWarmup).isLessThanOrEqualTo(2);
    }

    @Test
    void originsAreInternedOncePerBatchAndReleasedWithTheirLastTensor() {
        FastTensorBookkeeping b = new FastTensorBookkeeping();
        for (int walk = 0; walk < 3; walk++) {
            ColumnarTensorInfo cols = new ColumnarTensorInfo("h:1", "worker-0", "llm", "walk-" + walk, 1, 0);
            int f = cols.dtypeIndex("float32");
            for (int i = 0; i < 10; i++) {
                cols.addRow(walk * 100L + i, 0, 4, 1, new long[]{1}, new long[]{1}, f);
            }
            assertThat(b.putTensorBatchColumns(cols)).isTrue();
        }
        assertThat(b.origins().size()).isEqualTo(3);
        for (int i = 0; i < 10; i++) {
            b.forgetTensor(100L + i);
        }
        assertThat(b.origins().size()).isEqualTo(2);
        assertThat(b.getInfo(205).sourceGraphWalk()).isEqualTo("walk-2");
    }

    @Test
    void aBatchsLayoutsStayUntilItsLastRowGoesAndChurnReusesTheirBlock() {
        FastTensorBookkeeping b = new FastTensorBookkeeping(16);
        ColumnarTensorInfo cols = new ColumnarTensorInfo("h:1", "worker-0", "llm", "walk", 1, 0);
        int f = cols.dtypeIndex("bfloat16");
        int g = cols.dtypeIndex("int64");
        long[][] dims = {{2, 3, 4}, {7}, {}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
        for (int i = 0; i < dims.length; i++) {
            long[] stride = new long[dims[i].length];
            for (int k = 0; k < stride.length; k++) {
                stride[k] = 100L * i + k;
            }
            cols.addRow(10 + i, 0, 8, dims[i].length, dims[i], stride, i % 2 == 0 ? f : g);
        }
        b.putTensorBatchColumns(cols);
        cols.clear();
        assertThat(b.layouts().liveBlocks()).as("one block for the whole batch").isEqualTo(1);
        for (int i = 0; i < dims.length; i++) {
            TensorPointerInfo info = b.getInfo(10 + i);
            assertThat(info.dims()).as("row %d, after the caller cleared its columns", i)
                    .containsExactly(java.util.Arrays.stream(dims[i]).boxed().toArray(Long[]::new));
            for (int k = 0; k < dims[i].length; k++) {
                assertThat(info.stride().get(k)).isEqualTo(100L * i + k);
            }
        }
        b.forgetTensor(10);
        b.forgetTensor(12);
        b.forgetTensor(13);
        assertThat(b.layouts().liveBlocks()).as("row 11 still reads it").isEqualTo(1);
        assertThat(b.getInfo(11).dims()).containsExactly(7L);
        b.dereferenceBatchUniform(new long[]{11}, 1, true);
        assertThat(b.layouts().liveBlocks()).isZero();

        int allocated = -1;
        for (int round = 0; round < 500; round++) {
            cols.clear();
            int h = cols.dtypeIndex("bfloat16");
            for (int i = 0; i < 64; i++) {
                cols.addRow(1_000 + round * 64L + i, 0, 8, 3, new long[]{1, i, 3}, new long[]{3 * i, 3, 1}, h);
            }
            b.putTensorBatchColumns(cols);
            long[] ids = cols.uuids();
            assertThat(b.getInfo(ids[63]).dims()).containsExactly(1L, 63L, 3L);
            b.dereferenceBatchUniform(ids, 0, true);
            if (round == 1) {
                allocated = b.layouts().allocatedLongs();
            }
        }
        assertThat(b.layouts().liveBlocks()).isZero();
        assertThat(b.layouts().allocatedLongs()).as("500 batches wrote into the same blocks").isEqualTo(allocated);
    }

    @Test
    void aRefusedBatchLeavesNoLayoutBlockBehind() {
        FastTensorBookkeeping b = new FastTensorBookkeeping(16);
        b.putTensor(7, sized(7, 1));
        ColumnarTensorInfo cols = new ColumnarTensorInfo("h:1", "worker-0", "llm", "walk", 1, 0);
        int f = cols.dtypeIndex("int8");
        for (long u = 4; u < 10; u++) {
            cols.addRow(u, 0, 1, 1, new long[]{1}, new long[]{1}, f);
        }
        assertThatThrownBy(() -> b.putTensorBatchColumns(cols)).isInstanceOf(TensorStoreException.class);
        assertThat(b.liveCount()).isEqualTo(1);
        assertThat(b.layouts().liveBlocks()).as("only uuid 7's own").isEqualTo(1);
        b.forgetTensor(7);
        assertThat(b.layouts().liveBlocks()).isZero();
    }
}
