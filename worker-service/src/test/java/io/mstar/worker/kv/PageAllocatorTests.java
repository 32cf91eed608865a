package io.mstar.worker.kv;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PageAllocatorTests {

    @Test
    void neverHandsOutAPageTwiceUntilItIsFreed() {
        PageAllocator allocator = new PageAllocator(10);
        Set<Integer> handedOut = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            for (int page : allocator.allocate(2, "r" + i)) {
                assertThat(handedOut.add(page)).as("page %d handed out twice", page).isTrue();
                assertThat(allocator.isAllocated(page)).isTrue();
            }
        }
        assertThat(handedOut).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        assertThat(allocator.freePages()).isZero();
    }

    @Test
    void exhaustionIsTypedAndAllocatesNothing() {
        PageAllocator allocator = new PageAllocator(4);
        int[] held = allocator.allocate(3, "a");
        assertThatThrownBy(() -> allocator.allocate(2, "b")).isInstanceOfSatisfying(KvCacheException.class, e -> {
            assertThat(e.reason()).isEqualTo(KvCacheException.Reason.OUT_OF_PAGES);
            assertThat(e.requestId()).isEqualTo("b");
        });
        assertThat(allocator.freePages()).as("a refused allocation takes nothing").isEqualTo(1);
        assertThat(allocator.allocate(1, "c")).hasSize(1);
        assertThat(allocator.stats().exhaustions()).isEqualTo(1);
        allocator.free(held, "a");
        assertThat(allocator.allocate(2, "b")).hasSize(2);
    }

    @Test
    void freeReturnsPagesAndTheLastFreedIsReusedFirst() {
        PageAllocator allocator = new PageAllocator(6);
        int[] a = allocator.allocate(3, "a");
        int[] b = allocator.allocate(2, "b");
        allocator.free(a, "a");
        assertThat(allocator.freePages()).isEqualTo(4);
        int[] again = allocator.allocate(3, "c");
        assertThat(again).containsExactlyInAnyOrder(a);
        assertThat(Arrays.stream(again).noneMatch(p -> Arrays.stream(b).anyMatch(q -> q == p))).isTrue();
        assertThat(allocator.stats()).isEqualTo(new PageAllocatorStats(6, 1, 8, 3, 0, 5));
        assertThat(allocator.stats().pagesInUse()).isEqualTo(5);
    }

    @Test
    void aDoubleFreeIsCaughtAndFreesNothing() {
        PageAllocator allocator = new PageAllocator(4);
        int[] a = allocator.allocate(2, "a");
        allocator.free(new int[] {a[0]}, "a");
        assertThatThrownBy(() -> allocator.free(a, "a")).isInstanceOfSatisfying(KvCacheException.class,
                e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.PAGE_NOT_ALLOCATED));
        assertThat(allocator.isAllocated(a[1])).as("the valid page of a rejected free stays allocated").isTrue();
        assertThatThrownBy(() -> allocator.free(new int[] {a[1], a[1]}, "a"))
                .isInstanceOfSatisfying(KvCacheException.class,
                        e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.PAGE_NOT_ALLOCATED));
        assertThatThrownBy(() -> allocator.free(new int[] {4}, "a")).isInstanceOf(KvCacheException.class);
        assertThatThrownBy(() -> allocator.free(new int[] {-1}, "a")).isInstanceOf(KvCacheException.class);
        assertThat(allocator.freePages()).isEqualTo(3);
        allocator.free(new int[] {a[1]}, "a");
        assertThat(allocator.freePages()).isEqualTo(4);
    }

    @Test
    void zeroPagesIsAnEmptyAllocationAndNegativeIsAnError() {
        PageAllocator allocator = new PageAllocator(0);
        assertThat(allocator.allocate(0, "a")).isEmpty();
        assertThatThrownBy(() -> allocator.allocate(1, "a")).isInstanceOfSatisfying(KvCacheException.class,
                e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.OUT_OF_PAGES));
        assertThatThrownBy(() -> allocator.allocate(-1, "a")).isInstanceOfSatisfying(KvCacheException.class,
                e -> assertThat(e.reason()).isEqualTo(KvCacheException.Reason.INVALID_ARGUMENT));
    }
}
