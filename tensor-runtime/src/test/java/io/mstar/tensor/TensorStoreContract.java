package io.mstar.tensor;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import io.mstar.tensor.bookkeeping.ColumnarTensorInfo;
import io.mstar.tensor.bookkeeping.ReferenceInfo;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import io.mstar.tensor.bookkeeping.TensorStoreException.Reason;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.HostBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

abstract class TensorStoreContract {

    private final StoreFixture f;
    private final TensorStore store;

    TensorStoreContract(TensorBookkeeping bookkeeping) {
        f = new StoreFixture(bookkeeping);
        store = f.store;
    }

    @AfterEach
    void nothingLeaks() {
        f.assertBaseline();
    }

    @Test
    void aStoredTensorCanBeLookedUpAndRemoved() {
        long uuid = f.uuids.next();
        HostBuffer buffer = f.buffer(64);
        TensorPointerInfo info = f.info(uuid, buffer);
        store.putTensor("req-1", uuid, buffer, info, null);

        assertThat(store.getTensor(uuid)).isSameAs(buffer);
        assertThat(store.getInfo(uuid)).isEqualTo(info);
        assertThat(store.getCpuTensor(uuid)).isNull();
        assertThat(store.checkUuidPresence(uuid)).isTrue();
        assertThat(store.getAllUuids("req-1")).containsExactly(uuid);
        assertThat(store.bytesByDevice()).containsExactly(java.util.Map.entry("host", 64L));
        assertThat(f.bookkeeping.referenceInfo(uuid)).isEqualTo(ReferenceInfo.FRESH);

        store.removeTensor(uuid);
        assertThat(store.checkUuidPresence(uuid)).isFalse();
        assertThat(store.getInfo(uuid)).isNull();
        assertThat(store.getAllUuids("req-1")).isEmpty();
    }

    @Test
    void removeTensorFreesTheBufferExactlyOnce() {
        long uuid = f.put("req-1", 128);
        assertThat(f.device.stats().bytesInUse()).isEqualTo(128);
        store.removeTensor(uuid);
        assertThat(f.device.stats().frees()).isEqualTo(1);

        assertThatThrownBy(() -> store.removeTensor(uuid))
                .isInstanceOfSatisfying(TensorStoreException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_UUID);
                    assertThat(e.uuid()).isEqualTo(uuid);
                });
        assertThat(f.device.stats().frees()).as("no second free").isEqualTo(1);
        assertThat(store.errorCounts().get(Reason.UNKNOWN_UUID)).isEqualTo(1);
    }

    @Test
    void unknownUuidsAreTypedCountedErrors() {
        long unknown = f.uuids.next();
        assertThatThrownBy(() -> store.getTensor(unknown)).isInstanceOfSatisfying(TensorStoreException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_UUID));
        assertThatThrownBy(() -> store.getCpuTensor(unknown)).isInstanceOf(TensorStoreException.class);
        assertThatThrownBy(() -> store.markForgotten(new long[] {unknown})).isInstanceOf(TensorStoreException.class);
        assertThat(store.errorCounts().get(Reason.UNKNOWN_UUID)).isEqualTo(3);

        // Reference-state delegations are refused by the bookkeeper, which counts them.
        assertThatThrownBy(() -> store.dereference(unknown, 1)).isInstanceOfSatisfying(TensorStoreException.class,
                e -> assertThat(e.uuid()).isEqualTo(unknown));
        assertThatThrownBy(() -> store.setMetadata(unknown, true, null)).isInstanceOf(TensorStoreException.class);
        assertThatThrownBy(() -> store.canGc(unknown)).isInstanceOf(TensorStoreException.class);
        assertThat(store.snapshot().error(Reason.UNKNOWN_UUID)).isEqualTo(6);
        assertThat(store.checkUuidPresence(unknown)).as("presence is a question, not an error").isFalse();
        assertThat(store.getInfo(unknown)).isNull();
    }

    @Test
    void aUuidPutTwiceIsRefusedAndTheFirstTensorKept() {
        long uuid = f.put("req-1", 8);
        HostBuffer second = f.buffer(8);
        assertThatThrownBy(() -> store.putTensor("req-2", uuid, second, f.info(uuid, second), null))
                .isInstanceOfSatisfying(TensorStoreException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.DUPLICATE_UUID));
        assertThat(store.getAllUuids("req-2")).isEmpty();
        assertThat(store.getTensor(uuid)).isNotSameAs(second);
        f.device.free(second); // refused, so still the caller's
        store.removeTensor(uuid);
    }

    @Test
    void aPutTheBookkeeperRefusesWritesNothing() {
        long uuid = f.uuids.next();
        HostBuffer buffer = f.buffer(8);
        TensorPointerInfo otherUuid = f.info(uuid + 1, buffer);
        assertThatThrownBy(() -> store.putTensor("req-1", uuid, buffer, otherUuid, null))
                .isInstanceOf(TensorStoreException.class);
        assertThat(store.checkUuidPresence(uuid)).isFalse();
        assertThat(store.getAllUuids("req-1")).isEmpty();
        f.device.free(buffer);
    }

    @Test
    void hostCopiesAreKeptAlongsideAndHandedOutAsIndependentViews() {
        long uuid = f.uuids.next();
        HostBuffer buffer = f.buffer(4);
        ByteBuffer cpu = ByteBuffer.allocateDirect(6).put(new byte[] {9, 9, 1, 2, 3, 4});
        cpu.position(2);
        store.putTensor("req-1", uuid, buffer, f.info(uuid, buffer), cpu);
        cpu.position(0); // the giver's later moves do not shift what the store holds

        ByteBuffer first = store.getCpuTensor(uuid);
        assertThat(first.remaining()).isEqualTo(4);
        assertThat(first.get()).isEqualTo((byte) 1);
        ByteBuffer second = store.getCpuTensor(uuid);
        assertThat(second.position()).as("a reader's position is its own").isZero();
        assertThat(second.get(3)).isEqualTo((byte) 4);
        assertThat(store.hostCopyBytes()).isEqualTo(4);

        store.removeTensor(uuid);
        assertThat(store.hostCopyBytes()).isZero();
    }

    @Test
    void aBatchAcrossRequestsKeepsEachTensorWithItsRequest() {
        List<String> requests = List.of("a", "b", "a", "c");
        long[] uuids = new long[4];
        List<HostBuffer> buffers = new ArrayList<>();
        List<TensorPointerInfo> infos = new ArrayList<>();
        List<ByteBuffer> cpu = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            uuids[i] = f.uuids.next();
            buffers.add(f.buffer(10 + i));
            infos.add(f.info(uuids[i], buffers.get(i)));
            cpu.add(i == 1 ? ByteBuffer.wrap(new byte[] {(byte) i}) : null);
        }
        store.putTensorBatchMulti(requests, uuids, buffers, infos, cpu);

        assertThat(store.getAllUuids("a")).containsExactly(uuids[0], uuids[2]);
        assertThat(store.getAllUuids("b")).containsExactly(uuids[1]);
        assertThat(store.getAllUuids("c")).containsExactly(uuids[3]);
        for (int i = 0; i < 4; i++) {
            assertThat(store.getTensor(uuids[i])).isSameAs(buffers.get(i));
            assertThat(store.getInfo(uuids[i])).isEqualTo(infos.get(i));
        }
        assertThat(store.getCpuTensor(uuids[1]).get(0)).isEqualTo((byte) 1);
        assertThat(store.getCpuTensor(uuids[0])).isNull();

        assertThat(store.removeRequest("a")).isEqualTo(2);
        assertThat(store.removeRequest("b")).isEqualTo(1);
        assertThat(store.removeRequest("c")).isEqualTo(1);
    }

    @Test
    void aColumnarBatchAlignsRowsWithTensorsAndRequests() {
        assertThat(store.hasPutTensorBatchColumns()).isEqualTo(f.bookkeeping.hasPutTensorBatchColumns());
        ColumnarTensorInfo columns = new ColumnarTensorInfo("localhost:7000", "worker-3", "encoder", "walk-0", 1, 0);
        List<HostBuffer> buffers = List.of(f.buffer(16), f.buffer(32));
        int u8 = columns.dtypeIndex("uint8");
        long[] uuids = {f.uuids.next(), f.uuids.next()};
        for (int i = 0; i < 2; i++) {
            HostBuffer b = buffers.get(i);
            columns.addRow(uuids[i], b.address(), b.nbytes(), 1, new long[] {b.nbytes()}, new long[] {1}, u8);
        }
        store.putTensorBatchColumns(List.of("x", "y"), buffers, columns, null);

        for (int i = 0; i < 2; i++) {
            assertThat(store.getTensor(uuids[i])).isSameAs(buffers.get(i));
            assertThat(store.getInfo(uuids[i]).nbytes()).isEqualTo(buffers.get(i).nbytes());
            assertThat(store.getInfo(uuids[i]).sourceNodeName()).isEqualTo("encoder");
        }
        assertThat(store.getAllUuids("x")).containsExactly(uuids[0]);
        assertThat(store.getAllUuids("y")).containsExactly(uuids[1]);
        store.removeRequest("x");
        store.removeRequest("y");
    }

    @Test
    void aMalformedBatchIsRefusedBeforeAnythingIsStored() {
        long taken = f.put("old", 8);
        long fresh = f.uuids.next();
        List<HostBuffer> buffers = List.of(f.buffer(8), f.buffer(8));
        List<TensorPointerInfo> infos = List.of(f.info(fresh, buffers.get(0)), f.info(taken, buffers.get(1)));

        assertThatThrownBy(() -> store.putTensorBatchMulti(List.of("new", "new"), new long[] {fresh, taken},
                buffers, infos, null)).isInstanceOfSatisfying(TensorStoreException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.DUPLICATE_UUID);
                    assertThat(e.uuid()).isEqualTo(taken);
                });
        assertThatThrownBy(() -> store.putTensorBatchMulti(List.of("new"), new long[] {fresh},
                buffers, infos, null)).isInstanceOfSatisfying(TensorStoreException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
        assertThat(store.checkUuidPresence(fresh)).isFalse();
        assertThat(store.getAllUuids("new")).isEmpty();
        assertThat(f.bookkeeping.contains(fresh)).isFalse();

        buffers.forEach(f.device::free);
        store.removeTensor(taken);
    }

    @Test
    void setMetadataSetsOnlyTheFlagsGiven() {
        long uuid = f.put("req-1", 8);
        store.setMetadata(uuid, true, null);
        assertThat(f.bookkeeping.referenceInfo(uuid)).isEqualTo(new ReferenceInfo(0, true, false));
        store.setMetadata(uuid, null, true);
        assertThat(f.bookkeeping.referenceInfo(uuid)).isEqualTo(new ReferenceInfo(0, true, true));
        assertThat(store.canGc(uuid)).as("persisted").isFalse();
        store.setMetadata(uuid, false, null);
        assertThat(store.canGc(uuid)).isTrue();
        assertThat(store.isRegistered(uuid)).isTrue();
        store.removeTensor(uuid);
    }

    @Test
    void shmPlacementReachesTheDescriptor() {
        long uuid = f.put("req-1", 8);
        store.registerShmSegment(0, "mstar-worker-3-seg-0");
        store.setShmPlacement(new long[] {uuid}, new int[] {0}, new long[] {4096});
        assertThat(store.getInfo(uuid).shmSegment()).isEqualTo("mstar-worker-3-seg-0");
        assertThat(store.getInfo(uuid).shmOffset()).isEqualTo(4096);
        store.removeTensor(uuid);
    }

    @Test
    void aRemovedBufferGoesToTheReleaseExactlyOnce() {
        List<DeviceBuffer> deferred = new ArrayList<>();
        List<Long> released = new ArrayList<>();
        TensorStore deferring = new TensorStore(f.newBookkeeping(), (uuid, buffer) -> {
            released.add(uuid);
            deferred.add(buffer); // a read still has it pinned: freed later
        });
        long uuid = f.uuids.next();
        HostBuffer buffer = f.buffer(8);
        deferring.putTensor("a", uuid, buffer, f.info(uuid, buffer), null);

        deferring.removeRequest("a");
        assertThat(released).containsExactly(uuid);
        assertThat(f.device.isLive(buffer)).as("not freed by the store itself").isTrue();
        assertThatThrownBy(() -> deferring.removeTensor(uuid)).isInstanceOf(TensorStoreException.class);
        assertThat(released).hasSize(1);
        deferred.forEach(b -> b.device().free(b)); // the last unpin
    }

    @Test
    void anotherThreadIsRefused() throws Exception {
        long uuid = f.put("req-1", 8);
        Throwable refused = CompletableFuture.supplyAsync(() -> {
            try {
                store.getTensor(uuid);
                return null;
            } catch (Throwable t) {
                return t;
            }
        }).get(10, TimeUnit.SECONDS);
        assertThat(refused).isInstanceOf(IllegalStateException.class).hasMessageContaining("owned by");
        store.removeTensor(uuid);
    }

    @Test
    void aFailingFreeStillLeavesTheStoreConsistent() {
        long uuid = f.put("req-1", 8);
        // Someone freed the buffer behind the store's back: the device refuses the store's free.
        f.device.free(store.getTensor(uuid));
        assertThatThrownBy(() -> store.removeTensor(uuid)).isInstanceOfSatisfying(DeviceException.class,
                e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        assertThat(store.checkUuidPresence(uuid)).isFalse();
        assertThat(f.bookkeeping.contains(uuid)).as("record dropped despite the failed free").isFalse();
    }
}
