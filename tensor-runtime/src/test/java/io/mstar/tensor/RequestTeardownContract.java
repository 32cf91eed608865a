package io.mstar.tensor;

import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import io.mstar.tensor.bookkeeping.Collectable;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

abstract class RequestTeardownContract {

    private final StoreFixture f;
    private final TensorStore store;

    RequestTeardownContract(TensorBookkeeping bookkeeping) {
        f = new StoreFixture(bookkeeping);
        store = f.store;
    }

    @AfterEach
    void nothingLeaks() {
        f.assertBaseline();
    }

    @Test
    void teardownFreesEverythingOfTheRequestAndNothingElse() {
        long a1 = f.put("a", 100);
        long a2 = f.put("a", 200);
        long b1 = f.put("b", 50);

        assertThat(store.removeRequest("a")).isEqualTo(2);

        assertThat(store.checkUuidPresence(a1)).isFalse();
        assertThat(store.checkUuidPresence(a2)).isFalse();
        assertThat(store.checkUuidPresence(b1)).isTrue();
        assertThat(f.bookkeeping.contains(b1)).isTrue();
        assertThat(f.device.stats().bytesInUse()).isEqualTo(50);
        assertThat(store.getAllUuids("b")).containsExactly(b1);
        assertThat(store.removeRequest("a")).as("idempotent").isZero();
        assertThat(store.removeRequest("b")).isEqualTo(1);
    }

    @Test
    void teardownAfterSomeTensorsWereRemovedFreesOnlyTheRest() {
        long a1 = f.put("a", 8);
        f.put("a", 8);
        store.removeTensor(a1);
        assertThat(store.removeRequest("a")).isEqualTo(1);
        assertThat(f.device.stats().frees()).isEqualTo(2);
    }

    @Test
    void markForgottenKeepsTeardownFromDroppingTheRecordAgain() {
        long kept = f.put("a", 8);
        long dropped = f.put("a", 8);
        // A caller that went to the bookkeeper directly already dropped this record.
        f.bookkeeping.forgetTensor(dropped);
        store.markForgotten(new long[] {dropped});

        assertThat(store.removeRequest("a")).isEqualTo(2);
        assertThat(f.bookkeeping.errors().total()).as("no second forget crossed").isZero();
        assertThat(f.bookkeeping.contains(kept)).isFalse();
    }

    @Test
    void withoutMarkForgottenTheSecondDropIsReportedNotSwallowed() {
        long uuid = f.put("a", 8);
        f.bookkeeping.forgetTensor(uuid);
        assertThatThrownBy(() -> store.removeRequest("a")).isInstanceOfSatisfying(TensorStoreException.class,
                e -> assertThat(e.reason()).isEqualTo(TensorStoreException.Reason.UNKNOWN_UUID));
        assertThat(f.bookkeeping.errors().total()).isEqualTo(1);
        assertThat(store.checkUuidPresence(uuid)).as("the tensor is freed all the same").isFalse();
    }

    @Test
    void dereferenceWithCleanupThenTeardownDropsEachRecordOnce() {
        long acked = f.put("a", 8);
        long stillRead = f.put("a", 8);
        long[] both = {acked, stillRead};
        store.incrementRefBatch(both, new int[] {1, 2});
        store.setMetadata(acked, null, true);

        Collectable collectable = store.dereferenceBatchUniform(both, 1, true);

        assertThat(collectable.uuids()).containsExactly(acked);
        assertThat(collectable.registered()).containsExactly(true);
        assertThat(f.bookkeeping.contains(acked)).as("cleanup dropped it").isFalse();
        assertThat(store.checkUuidPresence(acked)).as("the tensor waits for the caller").isTrue();

        store.removeTensor(acked); // the collectable one, freed by the caller
        assertThat(store.removeRequest("a")).isEqualTo(1);
        assertThat(f.bookkeeping.errors().total()).isZero();
        assertThat(f.device.stats().frees()).isEqualTo(2);
    }

    @Test
    void aCollectableTensorForgottenInCleanupIsStillFreedByTeardown() {
        long uuid = f.put("a", 8);
        store.incrementRef(uuid, 1);
        store.dereferenceBatch(new long[] {uuid}, new int[] {1}, true);
        assertThat(store.removeRequest("a")).isEqualTo(1);
        assertThat(f.bookkeeping.errors().total()).isZero();
    }

    @Test
    void markingALiveRecordForgottenIsRefusedAndChangesNothing() {
        long live = f.put("a", 8);
        long dropped = f.put("a", 8);
        f.bookkeeping.forgetTensor(dropped);

        assertThatThrownBy(() -> store.markForgotten(new long[] {dropped, live}))
                .isInstanceOfSatisfying(TensorStoreException.class, e -> {
                    assertThat(e.reason()).isEqualTo(TensorStoreException.Reason.RECORD_STILL_LIVE);
                    assertThat(e.uuid()).isEqualTo(live);
                });
        assertThat(store.errorCounts().get(TensorStoreException.Reason.RECORD_STILL_LIVE)).isEqualTo(1);

        // Nothing was marked: the valid uuid is still the store's to forget, and teardown drops the live record.
        store.markForgotten(new long[] {dropped});
        assertThat(store.removeRequest("a")).isEqualTo(2);
        assertThat(f.bookkeeping.contains(live)).isFalse();
        assertThat(f.bookkeeping.errors().total()).isZero();
    }

    @Test
    void shutdownRemovesEveryRequestsTensors() {
        f.put("a", 8);
        f.put("b", 16);
        long forgotten = f.put("c", 32);
        f.bookkeeping.forgetTensor(forgotten);
        store.markForgotten(new long[] {forgotten});
        assertThat(store.removeAll()).isEqualTo(3);
        assertThat(store.removeAll()).isZero();
        assertThat(f.bookkeeping.errors().total()).isZero();
    }

    @Test
    void oneBadRecordDoesNotLeakTheRestOfTheRequest() {
        long bad = f.put("a", 8);
        f.put("a", 8);
        f.put("a", 8);
        f.bookkeeping.forgetTensor(bad); // a bookkeeping bug: dropped without mark_forgotten
        assertThatThrownBy(() -> store.removeRequest("a")).isInstanceOf(TensorStoreException.class);
        assertThat(f.device.stats().frees()).as("all three freed").isEqualTo(3);
    }
}
