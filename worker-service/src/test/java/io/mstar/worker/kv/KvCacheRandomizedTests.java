package io.mstar.worker.kv;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Random add / append / release sequences over many requests. After every step: page lists are disjoint and
 * cover exactly the pages in use, each request holds exactly the pages its tokens need, an append is refused
 * exactly when the pool is short, and every slot still reads back the value last written to it (so no page was
 * ever shared). Ends with device bytes back to baseline. Replay with {@code -Dmstar.test.seed=<seed>}.
 */
class KvCacheRandomizedTests {

    private static final int OPS_PER_SEED = 3000;
    private static final long BYTES_PER_TOKEN = 8;

    @TestFactory
    Stream<DynamicTest> randomAllocationsKeepThePoolConsistent() {
        List<Long> seeds = Seeds.withFixed("KvCacheRandomizedTests", 3L, 77L, 20261130L);
        return seeds.stream().map(seed -> DynamicTest.dynamicTest("seed " + seed, () -> {
            HostDevice device = new HostDevice();
            try {
                new Run(new SplittableRandom(seed), device).run();
            } catch (AssertionError e) {
                throw new AssertionError("replay with -Dmstar.test.seed=" + seed + ": " + e.getMessage(), e);
            } finally {
                assertThat(device.stats().bytesInUse()).as("device bytes back to baseline").isZero();
                device.close();
            }
        }));
    }

    private static final class Run {
        private final SplittableRandom random;
        private final HostDevice device;
        private final int pageSize;
        private final int totalPages;
        private final Map<String, Integer> tokens = new HashMap<>();
        private int nextRequest;

        Run(SplittableRandom random, HostDevice device) {
            this.random = random;
            this.device = device;
            this.pageSize = 1 + random.nextInt(8);
            this.totalPages = 1 + random.nextInt(40);
        }

        void run() {
            KvCache cache = new KvCache(device, new KvCacheConfig(pageSize, totalPages), BYTES_PER_TOKEN);
            try {
                for (int op = 0; op < OPS_PER_SEED; op++) {
                    step(cache);
                    checkInvariants(cache);
                }
            } finally {
                cache.close();
            }
            assertThat(device.stats().bytesInUse()).isZero();
        }

        private void step(KvCache cache) {
            int action = random.nextInt(10);
            List<String> live = new ArrayList<>(tokens.keySet());
            live.sort(null);
            if (action < 2 || live.isEmpty()) {
                String id = "r" + nextRequest++;
                cache.addRequest(id);
                tokens.put(id, 0);
            } else if (action < 8) {
                String id = live.get(random.nextInt(live.size()));
                int have = tokens.get(id);
                int n = random.nextInt(pageSize * 3 + 1);
                int needed = (have + n + pageSize - 1) / pageSize - (have + pageSize - 1) / pageSize;
                int freeBefore = cache.stats().freePages();
                try {
                    assertThat(cache.appendTokens(id, n)).isEqualTo(have);
                    assertThat(needed).as("granted although short").isLessThanOrEqualTo(freeBefore);
                    tokens.put(id, have + n);
                    for (int p = have; p < have + n; p++) {
                        write(cache, id, p);
                    }
                } catch (KvCacheException e) {
                    assertThat(e.reason()).isEqualTo(KvCacheException.Reason.OUT_OF_PAGES);
                    assertThat(e.requestId()).isEqualTo(id);
                    assertThat(needed).as("refused although it fit").isGreaterThan(freeBefore);
                    assertThat(cache.tokenCount(id)).isEqualTo(have);
                }
            } else {
                String id = live.get(random.nextInt(live.size()));
                int pages = cache.pages(id).length;
                assertThat(cache.releaseRequest(id)).isEqualTo(pages);
                tokens.remove(id);
            }
        }

        private void checkInvariants(KvCache cache) {
            Set<Integer> owned = new HashSet<>();
            for (Map.Entry<String, Integer> e : tokens.entrySet()) {
                int[] pages = cache.pages(e.getKey());
                assertThat(pages).hasSize((e.getValue() + pageSize - 1) / pageSize);
                for (int page : pages) {
                    if (!owned.add(page)) {
                        fail("page %d in two page lists", page);
                    }
                    assertThat(page).isBetween(0, totalPages - 1);
                }
            }
            PageAllocatorStats stats = cache.stats();
            assertThat(stats.pagesInUse()).isEqualTo(owned.size());
            assertThat(stats.pagesAllocated() - stats.pagesFreed()).isEqualTo(owned.size());
            assertThat(cache.requestIds()).isEqualTo(tokens.keySet());
            // Spot-check data: a page handed to two requests would have had one's value overwritten.
            for (Map.Entry<String, Integer> e : tokens.entrySet()) {
                if (e.getValue() > 0) {
                    int p = random.nextInt(e.getValue());
                    assertThat(read(cache, e.getKey(), p)).as("%s position %d", e.getKey(), p)
                            .isEqualTo(value(e.getKey(), p));
                }
            }
        }

        private static long value(String request, int position) {
            return ((long) Integer.parseInt(request.substring(1)) << 32) | position;
        }

        private void write(KvCache cache, String request, int position) {
            device.copyFromHost(ByteBuffer.allocate(8).putLong(0, value(request, position)), cache.pool(),
                    cache.slot(request, position).byteOffset());
        }

        private long read(KvCache cache, String request, int position) {
            ByteBuffer out = ByteBuffer.allocate(8);
            device.copyToHost(cache.pool(), cache.slot(request, position).byteOffset(), out);
            return out.getLong(0);
        }
    }
}
