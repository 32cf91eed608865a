package io.mstar.worker.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.HostDevice;

/**
 * Preemption by recompute on a {@link KvCache} (docs/streaming-and-kv.md#preemption-by-recompute): a dropped request
 * frees its device pages but keeps its positions and fed tokens, takes pages for all of them at its next append, and
 * frees nothing twice.
 */
class KvRecomputeTests {

    private final HostDevice device = new HostDevice("host", 1 << 20);

    @AfterEach
    void deviceIsBackToBaseline() {
        assertThat(device.stats().bytesInUse()).as("device bytes after close").isZero();
        device.close();
    }

    /** Pages of 2 tokens, 3 on the device, none on the host. */
    private KvCache cache() {
        return new KvCache(device, new KvCacheLayout(2, 3, 8), 0);
    }

    @Test
    void aDroppedRequestKeepsItsPositionsAndFedTokensAndTakesPagesForAllAtItsNextAppend() {
        KvCache cache = cache();
        cache.addRequest("a");
        cache.appendTokens("a", 3);
        cache.recordFed("a", 0, new int[] {7, 8, 9});

        assertThat(cache.drop("a")).isTrue();

        assertThat(cache.isDropped("a")).isTrue();
        assertThat(cache.freePages()).as("its two pages are free").isEqualTo(3);
        assertThat(cache.tokenCount("a")).isEqualTo(3);
        assertThat(cache.fed("a", 3)).containsExactly(7, 8, 9);
        assertThat(cache.devicePagesNeeded("a", 1)).as("all its positions and the next").isEqualTo(2);
        assertThat(cache.fitsInHeldPages("a", 1)).as("a speculated step never recomputes").isFalse();
        assertThatThrownBy(() -> cache.slot("a", 0)).isInstanceOf(KvCacheException.class).hasMessageContaining("dropped");
        assertThat(cache.drop("a")).as("nothing left to drop").isFalse();

        assertThat(cache.appendTokens("a", 1)).as("the call's own position is after the recomputed ones").isEqualTo(3);
        assertThat(cache.isDropped("a")).isFalse();
        assertThat(cache.pages("a")).hasSize(2);
        assertThat(cache.freePages()).isEqualTo(1);
        cache.recordFed("a", 3, new int[] {10});
        assertThat(cache.fed("a", 4)).containsExactly(7, 8, 9, 10);
        cache.close();
    }

    @Test
    void aDroppedRequestReleasesOnceAndAnOffloadedOneCannotBeDropped() {
        KvCache cache = new KvCache(device, new KvCacheLayout(2, 3, 8), 3);
        cache.addRequest("a");
        cache.appendTokens("a", 2);
        cache.addRequest("b");
        cache.appendTokens("b", 2);
        assertThat(cache.offload("b")).isTrue();
        assertThat(cache.drop("b")).as("offloaded: its pages are on the host").isFalse();
        assertThat(cache.drop("a")).isTrue();
        assertThat(cache.offload("a")).as("a dropped request has nothing to offload").isFalse();

        assertThat(cache.releaseRequest("a")).isZero();
        assertThatThrownBy(() -> cache.releaseRequest("a")).isInstanceOf(KvCacheException.class);
        cache.releaseRequest("b");
        assertThat(cache.stats().pagesInUse()).isZero();
        assertThat(cache.hostStats().pagesInUse()).isZero();
        cache.close();
    }

    @Test
    void feedsRecordedPastARollbackAreLeftOutAndOnlyReservedPositionsCanBeRead() {
        KvCache cache = cache();
        cache.addRequest("a");
        cache.appendTokens("a", 2);
        cache.truncate("a", 1);
        cache.recordFed("a", 0, new int[] {4, 5});
        assertThat(cache.fed("a", 1)).containsExactly(4);
        assertThatThrownBy(() -> cache.fed("a", 2)).isInstanceOf(KvCacheException.class);
        cache.close();
    }
}
