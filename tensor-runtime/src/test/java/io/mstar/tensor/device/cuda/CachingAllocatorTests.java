package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.DeviceMemoryStats;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The caching allocator's policy over a fake raw memory with a capacity, no GPU needed. */
class CachingAllocatorTests {

    /** Hands out increasing addresses up to a capacity, like cuMemAlloc answering OUT_OF_MEMORY past it. */
    static final class FakeMemory implements CachingAllocator.RawMemory {
        final long capacity;
        final Map<Long, Long> blocks = new HashMap<>();
        long next = 0x7f00_0000_0000L;
        long used;
        int allocations;
        int frees;

        FakeMemory(long capacity) {
            this.capacity = capacity;
        }

        @Override
        public CachingAllocator.Block allocate(long bytes) {
            if (used + bytes > capacity) {
                throw new DeviceException(Reason.OUT_OF_MEMORY, "fake", "cuMemAlloc(" + bytes + ")");
            }
            long a = next;
            next += bytes;
            blocks.put(a, bytes);
            used += bytes;
            allocations++;
            return new CachingAllocator.Block(a, bytes, null);
        }

        @Override
        public void free(CachingAllocator.Block block) {
            Long bytes = blocks.remove(block.address);
            assertThat(bytes).as("raw free of a block the fake handed out").isNotNull();
            used -= bytes;
            frees++;
        }
    }

    private final FakeMemory raw = new FakeMemory(64L << 20);
    private final CachingAllocator allocator = new CachingAllocator(raw, "fake");

    @Test
    void sizeClassesRoundUpTo512BytesSmallAnd2MiBLarge() {
        assertThat(CachingAllocator.sizeClass(0)).isEqualTo(512);
        assertThat(CachingAllocator.sizeClass(1)).isEqualTo(512);
        assertThat(CachingAllocator.sizeClass(513)).isEqualTo(1024);
        assertThat(CachingAllocator.sizeClass(1L << 20)).isEqualTo(1L << 20);
        assertThat(CachingAllocator.sizeClass((1L << 20) + 1)).isEqualTo(2L << 20);
        assertThat(CachingAllocator.sizeClass((5L << 20) + 3)).isEqualTo(6L << 20);
    }

    @Test
    void aFreedBlockIsReusedForTheSameClassAndCountedAsAHit() {
        CachingAllocator.Block a = allocator.allocate(1000);
        allocator.free(a);
        CachingAllocator.Block b = allocator.allocate(900);

        assertThat(b).isSameAs(a);
        assertThat(b.address).isEqualTo(a.address);
        assertThat(raw.allocations).isEqualTo(1);
        assertThat(allocator.stats()).isEqualTo(new DeviceMemoryStats(900, 1024, 2, 1, 1));
    }

    @Test
    void anotherClassDoesNotTakeACachedBlock() {
        CachingAllocator.Block a = allocator.allocate(1000);
        allocator.free(a);
        CachingAllocator.Block b = allocator.allocate(3000);

        assertThat(b.address).isNotEqualTo(a.address);
        assertThat(allocator.stats().cacheHits()).isZero();
    }

    @Test
    void statsReturnToBaselineAfterFreesAndEmptyCacheReturnsTheMemory() {
        CachingAllocator.Block[] a = new CachingAllocator.Block[10];
        for (int i = 0; i < a.length; i++) {
            a[i] = allocator.allocate(100_000L * (i + 1));
        }
        for (CachingAllocator.Block x : a) {
            allocator.free(x);
        }
        DeviceMemoryStats s = allocator.stats();
        assertThat(s.bytesInUse()).isZero();
        assertThat(s.liveBuffers()).isZero();
        assertThat(s.bytesReserved()).isEqualTo(raw.used).isPositive();

        allocator.emptyCache();

        assertThat(allocator.stats().bytesReserved()).isZero();
        assertThat(raw.blocks).isEmpty();
    }

    @Test
    void aDoubleFreeIsRejectedAsInvalidArgument() {
        CachingAllocator.Block a = allocator.allocate(10);
        allocator.free(a);

        assertThatThrownBy(() -> allocator.free(a))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
        assertThat(allocator.stats().frees()).isEqualTo(1);
    }

    @Test
    void outOfMemoryEmptiesTheCacheAndRetriesOnce() {
        CachingAllocator.Block a = allocator.allocate(40L << 20);
        allocator.free(a);

        CachingAllocator.Block b = allocator.allocate(30L << 20);

        assertThat(raw.frees).isEqualTo(1);
        assertThat(allocator.stats().bytesReserved()).isEqualTo(30L << 20);
        allocator.free(b);
    }

    @Test
    void outOfMemoryWithNothingCachedFailsOnlyThatRequest() {
        CachingAllocator.Block a = allocator.allocate(1 << 20);

        assertThatThrownBy(() -> allocator.allocate(1L << 40))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.OUT_OF_MEMORY));
        assertThatThrownBy(() -> allocator.allocate(Long.MAX_VALUE))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.OUT_OF_MEMORY));
        assertThat(a.live).isTrue();
        assertThat(allocator.liveBlocks()).isEqualTo(1);
        assertThat(allocator.stats().allocations()).isEqualTo(1);
    }

    @Test
    void aNegativeSizeIsInvalidArgument() {
        assertThatThrownBy(() -> allocator.allocate(-1))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
    }

    @Test
    void releaseAllFreesLiveBlocksAndCountsThemAsLeaked() {
        allocator.allocate(10);
        CachingAllocator.Block b = allocator.allocate(5 << 20);
        allocator.free(b);

        assertThat(allocator.releaseAll()).isEqualTo(1);
        assertThat(raw.blocks).isEmpty();
        assertThat(allocator.stats().bytesReserved()).isZero();
        assertThat(allocator.stats().bytesInUse()).isZero();
    }
}
