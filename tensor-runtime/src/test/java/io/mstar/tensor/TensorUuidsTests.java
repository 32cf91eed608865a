package io.mstar.tensor;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TensorUuidsTests {

    @Test
    void manyMintsAreUniquePositiveAndCarryTheirOrdinal() {
        TensorUuids uuids = new TensorUuids(7, new Random(1));
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            long uuid = uuids.next();
            assertThat(uuid).isPositive();
            assertThat(seen.add(uuid)).as("uuid %d minted twice", uuid).isTrue();
        }
        assertThat(seen).allSatisfy(u -> assertThat(TensorUuids.ordinalOfUuid(u)).isEqualTo(7));
    }

    @Test
    void twoIncarnationsOfOneOrdinalNeverCollide() {
        // Seeds chosen apart; printed so a failure can be replayed.
        long seedA = 42;
        long seedB = 43;
        TensorUuids first = new TensorUuids(3, new Random(seedA));
        TensorUuids restarted = new TensorUuids(3, new Random(seedB));
        assertThat(first.incarnation()).as("seeds %d/%d", seedA, seedB).isNotEqualTo(restarted.incarnation());
        Set<Long> live = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            live.add(first.next());
        }
        for (int i = 0; i < 100_000; i++) {
            long uuid = restarted.next();
            // contains() on the set, not AssertJ's doesNotContain, which scans the whole collection.
            assertThat(live.contains(uuid)).as("seeds %d/%d: %d reused", seedA, seedB, uuid).isFalse();
            assertThat(TensorUuids.ordinalOfUuid(uuid)).isEqualTo(3);
            assertThat(TensorUuids.incarnationOfUuid(uuid)).isEqualTo(restarted.incarnation());
        }
    }

    @Test
    void aCounterWrapMovesToAFreshIncarnation() {
        TensorUuids uuids = new TensorUuids(0, new Random(5));
        int before = uuids.incarnation();
        long first = uuids.next();
        uuids.advanceCounterTo(1L << TensorUuids.COUNTER_BITS);
        long afterWrap = uuids.next();
        assertThat(uuids.incarnation()).isNotEqualTo(before);
        assertThat(TensorUuids.counterOfUuid(afterWrap)).isZero();
        assertThat(afterWrap).isNotEqualTo(first);
        assertThat(TensorUuids.ordinalOfUuid(afterWrap)).isZero();
    }

    @Test
    void aCounterWrapNeverReturnsToAnIncarnationAlreadyUsed() {
        // A generator that keeps offering the same value first: the minter must skip it.
        Random stuck = new Random(9) {
            private int calls;

            @Override
            public int nextInt(int bound) {
                return calls++ < 5 ? 41 : super.nextInt(bound);
            }
        };
        TensorUuids uuids = new TensorUuids(1, stuck);
        assertThat(uuids.incarnation()).isEqualTo(42);
        uuids.advanceCounterTo(1L << TensorUuids.COUNTER_BITS);
        uuids.next();
        assertThat(uuids.incarnation()).isNotEqualTo(42).isBetween(1, (1 << TensorUuids.INCARNATION_BITS) - 1);
    }

    @Test
    void entityIdsMapToOrdinalsAndTheConductorIsReserved() {
        assertThat(TensorUuids.ordinalOf("worker-0")).isZero();
        assertThat(TensorUuids.ordinalOf("worker-12")).isEqualTo(12);
        assertThat(TensorUuids.ordinalOf("conductor")).isEqualTo(TensorUuids.CONDUCTOR_ORDINAL);
        assertThat(TensorUuids.ordinalOf("worker-" + TensorUuids.MAX_WORKER_ORDINAL))
                .isEqualTo(TensorUuids.MAX_WORKER_ORDINAL);
        for (String bad : new String[] {"worker-2047", "worker-", "worker--1", "worker-1a", "gpu-1", "", null}) {
            assertThatThrownBy(() -> TensorUuids.ordinalOf(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        long uuid = TensorUuids.forEntity("conductor").next();
        assertThat(TensorUuids.isConductorUuid(uuid)).isTrue();
        assertThat(TensorUuids.isConductorUuid(TensorUuids.forEntity("worker-5").next())).isFalse();
    }

    @Test
    void workersAndTheConductorNeverShareAUuid() {
        Set<Long> seen = new HashSet<>();
        // Same seed everywhere: only the ordinal separates them.
        for (int ordinal : new int[] {0, 1, 2, TensorUuids.CONDUCTOR_ORDINAL}) {
            TensorUuids uuids = new TensorUuids(ordinal, new Random(7));
            for (int i = 0; i < 10_000; i++) {
                assertThat(seen.add(uuids.next())).isTrue();
            }
        }
    }
}
