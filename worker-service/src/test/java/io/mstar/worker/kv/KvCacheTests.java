package io.mstar.worker.kv;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.HostDevice;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The paged KV store on a real {@link HostDevice}. */
class KvCacheTests {

    private static final long BYTES_PER_TOKEN = 16;

    private final HostDevice device = new HostDevice("host", 1 << 20);

    @AfterEach
    void deviceIsBackToBaseline() {
        assertThat(device.stats().bytesInUse()).as("device bytes after close").isZero();
        assertThat(device.stats().liveBuffers()).isZero();
        device.close();
    }

    private KvCache cache(int pageSize, int pages) {
        return new KvCache(device, new KvCacheConfig(pageSize, pages), BYTES_PER_TOKEN);
    }

    private void write(KvCache cache, String request, int position, long value) {
        KvSlot slot = cache.slot(request, position);
        device.copyFromHost(ByteBuffer.allocate(8).putLong(0, value), cache.pool(), slot.byteOffset());
    }

    private long read(KvCache cache, String request, int position) {
        ByteBuffer out = ByteBuffer.allocate(8);
        device.copyToHost(cache.pool(), cache.slot(request, position).byteOffset(), out);
        return out.getLong(0);
    }

    @Test
    void takesOnePoolBufferSizedFromTheConfigAndFreesItOnClose() {
        KvCache cache = cache(4, 8);
        assertThat(cache.layout().poolBytes()).isEqualTo(8 * 4 * BYTES_PER_TOKEN);
        assertThat(device.stats().bytesInUse()).isEqualTo(8 * 4 * BYTES_PER_TOKEN);
        assertThat(device.stats().liveBuffers()).isEqualTo(1);
        cache.addRequest("a");
        cache.appendTokens("a", 9);
        cache.close();
        cache.close();
        assertThat(device.stats().bytesInUse()).isZero();
        assertThatThrownBy(() -> cache.appendTokens("a", 1)).isInstanceOfSatisfying(KvCacheException.class,
                e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.CLOSED));
    }

    @Test
    void appendingTakesWholePagesOnlyWhenTheLastOneIsFull() {
        try (KvCache cache = cache(4, 8)) {
            cache.addRequest("a");
            assertThat(cache.appendTokens("a", 3)).isZero();
            assertThat(cache.pages("a")).hasSize(1);
            assertThat(cache.appendTokens("a", 1)).isEqualTo(3);
            assertThat(cache.pages("a")).hasSize(1);
            assertThat(cache.appendTokens("a", 1)).isEqualTo(4);
            assertThat(cache.pages("a")).hasSize(2);
            assertThat(cache.appendTokens("a", 7)).isEqualTo(5);
            assertThat(cache.pages("a")).hasSize(3);
            assertThat(cache.appendTokens("a", 0)).isEqualTo(12);
            assertThat(cache.tokenCount("a")).isEqualTo(12);
            assertThat(cache.stats().pagesInUse()).isEqualTo(3);
        }
    }

    @Test
    void slotsFollowThePageTable() {
        try (KvCache cache = cache(4, 8)) {
            cache.addRequest("a");
            cache.addRequest("b");
            cache.appendTokens("a", 2);
            cache.appendTokens("b", 4);
            cache.appendTokens("a", 4);
            int[] pages = cache.pages("a");
            KvSlot slot = cache.slot("a", 5);
            assertThat(slot).isEqualTo(new KvSlot(5, pages[1], 1,
                    (long) pages[1] * 4 * BYTES_PER_TOKEN + BYTES_PER_TOKEN));
            assertThat(pages[1]).as("b's page sits between a's two").isNotEqualTo(pages[0] + 1);
            assertThatThrownBy(() -> cache.slot("a", 6)).isInstanceOfSatisfying(KvCacheException.class,
                    e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.POSITION_OUT_OF_RANGE));
            assertThatThrownBy(() -> cache.slot("a", -1)).isInstanceOf(KvCacheException.class);
        }
    }

    @Test
    void exhaustionFailsOnlyTheRequestThatAskedAndTheOthersContinue() {
        try (KvCache cache = cache(2, 4)) {
            cache.addRequest("a");
            cache.addRequest("b");
            cache.appendTokens("a", 4);
            cache.appendTokens("b", 3);
            for (int p = 0; p < 4; p++) {
                write(cache, "a", p, 100 + p);
            }
            for (int p = 0; p < 3; p++) {
                write(cache, "b", p, 200 + p);
            }
            assertThatThrownBy(() -> cache.appendTokens("a", 1)).isInstanceOfSatisfying(KvCacheException.class,
                    e -> {
                        assertThat(e.reason()).isEqualTo(KvCacheException.Reason.OUT_OF_PAGES);
                        assertThat(e.requestId()).isEqualTo("a");
                    });
            assertThat(cache.tokenCount("a")).as("a failed append changes nothing").isEqualTo(4);
            assertThat(cache.pages("a")).hasSize(2);

            cache.appendTokens("b", 1);
            write(cache, "b", 3, 203);
            assertThat(cache.releaseRequest("a")).isEqualTo(2);
            cache.appendTokens("b", 4);
            for (int p = 0; p < 4; p++) {
                assertThat(read(cache, "b", p)).isEqualTo(200 + p);
            }
            assertThat(cache.stats().exhaustions()).isEqualTo(1);
        }
    }

    @Test
    void releaseFreesEveryPageExactlyOnce() {
        try (KvCache cache = cache(4, 8)) {
            cache.addRequest("a");
            cache.appendTokens("a", 10);
            assertThat(cache.releaseRequest("a")).isEqualTo(3);
            assertThat(cache.stats().freePages()).isEqualTo(8);
            assertThat(cache.stats().pagesFreed()).isEqualTo(3);
            assertThatThrownBy(() -> cache.releaseRequest("a")).isInstanceOfSatisfying(KvCacheException.class,
                    e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.UNKNOWN_REQUEST));
            assertThat(cache.stats().pagesFreed()).isEqualTo(3);
            assertThat(cache.contains("a")).isFalse();
            cache.addRequest("a");
            assertThat(cache.tokenCount("a")).as("a re-added request starts empty").isZero();
        }
    }

    @Test
    void unknownAndDuplicateRequestsAreTypedErrors() {
        try (KvCache cache = cache(4, 8)) {
            cache.addRequest("a");
            assertThatThrownBy(() -> cache.addRequest("a")).isInstanceOfSatisfying(KvCacheException.class,
                    e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.DUPLICATE_REQUEST));
            assertThatThrownBy(() -> cache.appendTokens("x", 1)).isInstanceOfSatisfying(KvCacheException.class,
                    e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.UNKNOWN_REQUEST));
            assertThatThrownBy(() -> cache.appendTokens("a", -1)).isInstanceOfSatisfying(KvCacheException.class,
                    e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.INVALID_ARGUMENT));
            assertThat(cache.requestIds()).containsExactly("a");
        }
    }

    @Test
    void closeReleasesRequestsStillHoldingPages() {
        KvCache cache = cache(4, 8);
        cache.addRequest("a");
        cache.addRequest("b");
        cache.appendTokens("a", 5);
        cache.appendTokens("b", 1);
        cache.close();
        assertThat(device.stats().bytesInUse()).isZero();
    }

    @Test
    void aPoolTheDeviceCannotHoldFailsAtConstruction() {
        assertThatThrownBy(() -> new KvCache(device, new KvCacheConfig(1024, 1024), 1024))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.OUT_OF_MEMORY));
        assertThatThrownBy(() -> new KvCacheLayout(1 << 20, 1 << 20, 1L << 40))
                .isInstanceOf(ArithmeticException.class);
    }

    @Test
    void onlyTheOwningThreadMayUseTheCache() throws Exception {
        try (KvCache cache = cache(4, 8)) {
            cache.addRequest("a");
            Throwable fromOther = CompletableFuture.supplyAsync(() -> {
                try {
                    cache.appendTokens("a", 1);
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            }).get();
            assertThat(fromOther).isInstanceOf(IllegalStateException.class);
            assertThat(cache.tokenCount("a")).isZero();
        }
    }
}
