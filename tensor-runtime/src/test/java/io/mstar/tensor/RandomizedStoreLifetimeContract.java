package io.mstar.tensor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import io.mstar.tensor.bookkeeping.Collectable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random puts, reference changes, cleanups, removals and teardowns against a model of which request holds which
 * tensor: every tensor is freed exactly once, a teardown frees its request's tensors and nothing else, and no
 * record is dropped twice.
 */
abstract class RandomizedStoreLifetimeContract {

    private final StoreFixture f;
    private final TensorStore store;

    RandomizedStoreLifetimeContract(TensorBookkeeping bookkeeping) {
        f = new StoreFixture(bookkeeping);
        store = f.store;
    }

    @AfterEach
    void nothingLeaks() {
        f.assertBaseline();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 20261130})
    void everyTensorIsFreedExactlyOnce(long seed) {
        Random random = new Random(seed);
        Map<Long, String> owner = new HashMap<>();
        Map<String, Set<Long>> byRequest = new HashMap<>();
        Set<Long> forgotten = new HashSet<>();
        long frees = 0;
        for (int step = 0; step < 20_000; step++) {
            String where = "seed " + seed + ", step " + step;
            int op = random.nextInt(10);
            List<Long> live = new ArrayList<>(owner.keySet());
            if (op < 4 || live.isEmpty()) {
                String request = "r" + random.nextInt(8);
                long uuid = f.put(request, 1 + random.nextInt(64));
                owner.put(uuid, request);
                byRequest.computeIfAbsent(request, r -> new HashSet<>()).add(uuid);
            } else if (op < 6) {
                long uuid = live.get(random.nextInt(live.size()));
                if (!forgotten.contains(uuid)) {
                    store.incrementRef(uuid, 1);
                    Collectable c = store.dereferenceBatchUniform(new long[] {uuid}, 1 + random.nextInt(2), true);
                    if (c.size() == 1) {
                        forgotten.add(uuid);
                    }
                }
            } else if (op < 8) {
                long uuid = live.get(random.nextInt(live.size()));
                store.removeTensor(uuid);
                frees++;
                byRequest.get(owner.remove(uuid)).remove(uuid);
                forgotten.remove(uuid);
            } else {
                String request = "r" + random.nextInt(8);
                Set<Long> expected = byRequest.getOrDefault(request, Set.of());
                assertThat(new HashSet<>(store.getAllUuids(request))).as(where).isEqualTo(expected);
                assertThat(store.removeRequest(request)).as(where).isEqualTo(expected.size());
                frees += expected.size();
                expected.forEach(owner::remove);
                forgotten.removeAll(expected);
                byRequest.remove(request);
            }
            assertThat(f.device.stats().frees()).as(where).isEqualTo(frees);
            assertThat(store.liveTensorCount()).as(where).isEqualTo(owner.size());
            assertThat(f.bookkeeping.liveCount()).as(where).isEqualTo(owner.size() - forgotten.size());
        }
        assertThat(f.bookkeeping.errors().total()).as("seed %d: no record dropped twice", seed).isZero();
        for (int r = 0; r < 8; r++) {
            store.removeRequest("r" + r);
        }
    }
}
