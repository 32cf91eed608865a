package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Each method of {@link TensorBookkeeping}, one scenario per test, on both backends. */
class BookkeepingContractTests {

    static Stream<Supplier<TensorBookkeeping>> backends() {
        return Stream.of(named("plain", PlainTensorBookkeeping::new), named("fast", () -> new FastTensorBookkeeping(4)));
    }

    private static Supplier<TensorBookkeeping> named(String name, Supplier<TensorBookkeeping> s) {
        return new Supplier<>() {
            @Override
            public TensorBookkeeping get() {
                return s.get();
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    static TensorPointerInfo info(long uuid) {
        return new TensorPointerInfo(uuid, List.of(2L, 3L), List.of(3L, 1L), "bfloat16", 12, 0xdead0000L + uuid, 4,
                "10.0.0.1:7000", "worker-1", 2, 1, null, 0, "llm", "walk-0");
    }

    private static TensorStoreException refused(TensorStoreException.Reason reason, Executable call) {
        TensorStoreException e = catchThrowableOfType(() -> {
            try {
                call.execute();
            } catch (Throwable t) {
                throw (t instanceof Exception ex) ? ex : new RuntimeException(t);
            }
        }, TensorStoreException.class);
        assertThat(e).as("refused").isNotNull();
        assertThat(e.reason()).isEqualTo(reason);
        return e;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aFreshRecordHoldsNoReferencesIsNotPersistedAndIsCollectable(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        assertThat(b.referenceInfo(1)).isEqualTo(ReferenceInfo.FRESH);
        assertThat(b.canGc(1)).isTrue();
        assertThat(b.isRegistered(1)).isFalse();
        assertThat(b.liveCount()).isEqualTo(1);
        assertThat(b.contains(1)).isTrue();
        assertThat(b.getInfo(1)).isEqualTo(info(1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void countsMayGoNegativeAndStayCollectableUntilReferencesReturn(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        b.dereference(1, 2);
        assertThat(b.referenceInfo(1).refCnt()).isEqualTo(-2);
        assertThat(b.canGc(1)).isTrue();
        b.incrementRef(1, 3);
        assertThat(b.referenceInfo(1).refCnt()).isEqualTo(1);
        assertThat(b.canGc(1)).isFalse();
        b.dereference(1);
        assertThat(b.canGc(1)).isTrue();
        b.incrementRef(1);
        b.dereference(1, -1);
        assertThat(b.referenceInfo(1).refCnt()).isEqualTo(2);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aPersistedTensorIsNeverCollectableWhateverItsCount(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        b.setPersist(1, true);
        assertThat(b.canGc(1)).isFalse();
        b.dereference(1, 5);
        assertThat(b.canGc(1)).isFalse();
        assertThat(b.dereferenceBatchUniform(new long[]{1}, 1, true).isEmpty()).isTrue();
        assertThat(b.contains(1)).isTrue();
        b.setPersist(1, false);
        assertThat(b.canGc(1)).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void memRegisteredIsReportedAndCleared(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        b.setMemRegistered(1, true);
        assertThat(b.isRegistered(1)).isTrue();
        assertThat(b.referenceInfo(1)).isEqualTo(new ReferenceInfo(0, false, true));
        b.setMemRegistered(1, false);
        assertThat(b.isRegistered(1)).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void everyCallNamingAnUnknownUuidIsRefusedAndCounted(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        List<Executable> calls = List.of(
                () -> b.canGc(9), () -> b.dereference(9, 1), () -> b.incrementRef(9, 1), () -> b.forgetTensor(9),
                () -> b.isRegistered(9), () -> b.setPersist(9, true), () -> b.setMemRegistered(9, true),
                () -> b.referenceInfo(9),
                () -> b.dereferenceBatch(new long[]{1, 9}, new int[]{1, 1}, true),
                () -> b.dereferenceBatchUniform(new long[]{1, 9}, 1, true),
                () -> b.incrementRefBatch(new long[]{1, 9}, new int[]{1, 1}),
                () -> b.incrementRefBatchUniform(new long[]{1, 9}, 1),
                () -> b.setShmPlacement(new long[]{1, 9}, new int[]{-1, -1}, new long[]{0, 0}));
        for (Executable call : calls) {
            TensorStoreException e = refused(TensorStoreException.Reason.UNKNOWN_UUID, call);
            assertThat(e.uuid()).isEqualTo(9);
        }
        assertThat(b.errors().get(TensorStoreException.Reason.UNKNOWN_UUID)).isEqualTo(calls.size());
        // The refused batches changed nothing on the known uuid.
        assertThat(b.referenceInfo(1)).isEqualTo(ReferenceInfo.FRESH);
        assertThat(b.getInfo(1)).isEqualTo(info(1));
        // A lookup is not an error: "no descriptor here" is a legitimate answer.
        assertThat(b.getInfo(9)).isNull();
        assertThat(b.contains(9)).isFalse();
        assertThat(b.errors().total()).isEqualTo(calls.size());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void forgettingTwiceIsADoubleFreeAndIsRefused(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        b.forgetTensor(1);
        assertThat(b.liveCount()).isZero();
        refused(TensorStoreException.Reason.UNKNOWN_UUID, () -> b.forgetTensor(1));
        refused(TensorStoreException.Reason.UNKNOWN_UUID, () -> b.dereferenceBatchUniform(new long[]{1}, 1, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void puttingAHeldUuidIsRefusedAndKeepsTheLiveCount(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(1, info(1));
        b.incrementRef(1, 2);
        refused(TensorStoreException.Reason.DUPLICATE_UUID, () -> b.putTensor(1, info(1)));
        assertThat(b.referenceInfo(1).refCnt()).isEqualTo(2);
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.putTensor(2, info(3)));
        TensorPointerInfo ragged = new TensorPointerInfo(4, List.of(1L, 2L), List.of(1L), "int8", 2, 0, "h:1", "worker-0");
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.putTensor(4, ragged));
        assertThat(b.liveCount()).isEqualTo(1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aBatchPutWithARepeatedOrHeldUuidStoresNothing(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(5, info(5));
        refused(TensorStoreException.Reason.DUPLICATE_UUID,
                () -> b.putTensorBatch(new long[]{1, 2, 1}, List.of(info(1), info(2), info(1))));
        refused(TensorStoreException.Reason.DUPLICATE_UUID,
                () -> b.putTensorBatch(new long[]{1, 5}, List.of(info(1), info(5))));
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.putTensorBatch(new long[]{1}, List.of()));
        assertThat(b.liveCount()).isEqualTo(1);
        b.putTensorBatch(new long[]{1, 2}, List.of(info(1), info(2)));
        assertThat(b.liveCount()).isEqualTo(3);
        assertThat(b.getInfo(2)).isEqualTo(info(2));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void dereferenceBatchReportsCollectableUuidsWithTheirRegisteredFlag(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensorBatch(new long[]{1, 2, 3}, List.of(info(1), info(2), info(3)));
        b.incrementRefBatch(new long[]{1, 2, 3}, new int[]{1, 2, 1});
        b.setMemRegistered(3, true);
        Collectable c = b.dereferenceBatch(new long[]{3, 2, 1}, new int[]{1, 1, 1}, false);
        assertThat(c).isEqualTo(new Collectable(new long[]{3, 1}, new boolean[]{true, false}));
        assertThat(b.liveCount()).as("without cleanup the records stay").isEqualTo(3);
        Collectable again = b.dereferenceBatchUniform(new long[]{1, 2, 3}, 1, true);
        assertThat(again).isEqualTo(new Collectable(new long[]{1, 2, 3}, new boolean[]{false, false, true}));
        assertThat(b.liveCount()).as("cleanup dropped them").isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aDereferenceBatchWithARepeatedUuidOrMismatchedCountsChangesNothing(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensorBatch(new long[]{1, 2}, List.of(info(1), info(2)));
        TensorStoreException e = refused(TensorStoreException.Reason.INVALID_ARGUMENT,
                () -> b.dereferenceBatchUniform(new long[]{1, 2, 1}, 1, true));
        assertThat(e.uuid()).isEqualTo(1);
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.dereferenceBatch(new long[]{1, 2}, new int[]{1}, true));
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.incrementRefBatch(new long[]{1, 2}, new int[]{1}));
        assertThat(b.liveCount()).isEqualTo(2);
        assertThat(b.referenceInfo(1)).isEqualTo(ReferenceInfo.FRESH);
        assertThat(b.errors().snapshot()).containsEntry(TensorStoreException.Reason.INVALID_ARGUMENT, 3L);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void incrementBatchesAddPerUuidAndUniformly(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensorBatch(new long[]{1, 2}, List.of(info(1), info(2)));
        b.incrementRefBatch(new long[]{1, 2, 1}, new int[]{1, 2, 3});
        b.incrementRefBatchUniform(new long[]{1, 2}, 1);
        assertThat(b.referenceInfo(1).refCnt()).isEqualTo(5);
        assertThat(b.referenceInfo(2).refCnt()).isEqualTo(3);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void shmPlacementIsWrittenBackIntoTheHeldDescriptor(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensorBatch(new long[]{1, 2}, List.of(info(1), info(2)));
        b.registerShmSegment(0, "mstar-arena-w1-0");
        b.registerShmSegment(3, "mstar-arena-w1-3");
        b.registerShmSegment(3, "mstar-arena-w1-3");
        b.setShmPlacement(new long[]{1, 2}, new int[]{3, -1}, new long[]{4096, 0});
        TensorPointerInfo one = b.getInfo(1);
        assertThat(one.shmSegment()).isEqualTo("mstar-arena-w1-3");
        assertThat(one.shmOffset()).isEqualTo(4096);
        assertThat(one.dims()).isEqualTo(info(1).dims());
        assertThat(b.getInfo(2).shmSegment()).as("-1: spilled, no segment").isNull();
        b.setShmPlacement(new long[]{1}, new int[]{0}, new long[]{64});
        assertThat(b.getInfo(1).shmSegment()).isEqualTo("mstar-arena-w1-0");
        assertThat(b.getInfo(1).shmOffset()).isEqualTo(64);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void placementOnAnUnregisteredSegmentAndRenamingASegmentAreRefused(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensorBatch(new long[]{1, 2}, List.of(info(1), info(2)));
        b.registerShmSegment(0, "seg-0");
        refused(TensorStoreException.Reason.INVALID_ARGUMENT,
                () -> b.setShmPlacement(new long[]{1, 2}, new int[]{0, 1}, new long[]{8, 8}));
        assertThat(b.getInfo(1).shmSegment()).as("a refused call changed nothing").isNull();
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.registerShmSegment(0, "seg-other"));
        refused(TensorStoreException.Reason.INVALID_ARGUMENT, () -> b.registerShmSegment(-1, "seg"));
        refused(TensorStoreException.Reason.INVALID_ARGUMENT,
                () -> b.setShmPlacement(new long[]{1}, new int[]{0}, new long[]{}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aDescriptorFromAPeerKeepsItsSegmentNameAndHighRanksRoundTrip(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        List<Long> dims = List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        TensorPointerInfo peer = new TensorPointerInfo(7, dims, dims, "float16", 99, 0, 0, "10.0.0.9:7000", "worker-3",
                1, 0, "mstar-arena-w3-1", 512, null, null);
        TensorPointerInfo scalar = new TensorPointerInfo(8, List.of(), List.of(), "float32", 4, 0, "h:1", "worker-0");
        b.putTensor(7, peer);
        b.putTensor(8, scalar);
        assertThat(b.getInfo(7)).isEqualTo(peer);
        assertThat(b.getInfo(8)).isEqualTo(scalar);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void columnarPutIsTakenByTheFastBackendAndDeclinedByThePlainOne(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        ColumnarTensorInfo cols = new ColumnarTensorInfo("10.0.0.1:7000", "worker-1", "vae", "walk-3", 2, 1);
        int bf16 = cols.dtypeIndex("bfloat16");
        cols.addRow(11, 0x1000, 24, 2, new long[]{3, 4}, new long[]{4, 1}, bf16);
        cols.addRow(12, 0x2000, 8, 1, new long[]{4}, new long[]{1}, cols.dtypeIndex("int16"));
        boolean handled = b.putTensorBatchColumns(cols);
        assertThat(handled).isEqualTo(b.hasPutTensorBatchColumns());
        if (!handled) {
            assertThat(b.liveCount()).as("declining stores nothing").isZero();
            b.putTensorBatch(cols.uuids(), cols.toPointerInfos());
        }
        assertThat(b.getInfo(11)).isEqualTo(new TensorPointerInfo(11, List.of(3L, 4L), List.of(4L, 1L), "bfloat16", 24,
                0x1000, 0, "10.0.0.1:7000", "worker-1", 2, 1, null, 0, "vae", "walk-3"));
        assertThat(b.getInfo(12).dtype()).isEqualTo("int16");
        assertThat(b.referenceInfo(12)).isEqualTo(ReferenceInfo.FRESH);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aRefusedColumnarPutStoresNoneOfItsRows(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        b.putTensor(12, info(12));
        ColumnarTensorInfo cols = new ColumnarTensorInfo("h:1", "worker-0", null, null, 1, 0);
        int f = cols.dtypeIndex("float32");
        for (long u : new long[]{10, 11, 12, 13}) {
            cols.addRow(u, 0, 4, 1, new long[]{1}, new long[]{1}, f);
        }
        refused(TensorStoreException.Reason.DUPLICATE_UUID, () -> {
            if (!b.putTensorBatchColumns(cols)) {
                b.putTensorBatch(cols.uuids(), cols.toPointerInfos());
            }
        });
        assertThat(b.liveCount()).isEqualTo(1);
        assertThat(b.contains(10)).isFalse();
        assertThat(b.getInfo(12)).isEqualTo(info(12));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void manyEntriesSurviveGrowthAndChurn(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        int n = 200_000;
        for (long u = 0; u < n; u++) {
            b.putTensor(u * 0x1_0000_0001L, new TensorPointerInfo(u * 0x1_0000_0001L, List.of(u), List.of(1L), "int8",
                    u, u, "h:1", "worker-0"));
            b.incrementRef(u * 0x1_0000_0001L, (int) (u % 3));
        }
        for (long u = 0; u < n; u += 2) {
            b.forgetTensor(u * 0x1_0000_0001L);
        }
        assertThat(b.liveCount()).isEqualTo(n / 2);
        for (long u = 0; u < n; u++) {
            long id = u * 0x1_0000_0001L;
            assertThat(b.contains(id)).isEqualTo(u % 2 == 1);
            if (u % 2 == 1) {
                assertThat(b.referenceInfo(id).refCnt()).isEqualTo(u % 3);
                assertThat(b.getInfo(id).nbytes()).isEqualTo(u);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void errorCountsStartAtZeroForEveryReason(Supplier<TensorBookkeeping> make) {
        assertThat(make.get().errors().snapshot()).isEqualTo(Map.of(
                TensorStoreException.Reason.UNKNOWN_UUID, 0L,
                TensorStoreException.Reason.DUPLICATE_UUID, 0L,
                TensorStoreException.Reason.RECORD_STILL_LIVE, 0L,
                TensorStoreException.Reason.INVALID_ARGUMENT, 0L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void theExceptionCarriesReasonUuidAndOperation(Supplier<TensorBookkeeping> make) {
        TensorBookkeeping b = make.get();
        assertThatThrownBy(() -> b.dereference(77, 1))
                .isInstanceOfSatisfying(TensorStoreException.class, e -> {
                    assertThat(e.reason()).isEqualTo(TensorStoreException.Reason.UNKNOWN_UUID);
                    assertThat(e.uuid()).isEqualTo(77);
                    assertThat(e.operation()).isEqualTo("dereference");
                });
    }
}
