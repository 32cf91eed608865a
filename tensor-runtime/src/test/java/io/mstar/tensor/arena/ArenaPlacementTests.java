package io.mstar.tensor.arena;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.testing.Seeds;

class ArenaPlacementTests {

    private static final int KIB = 1024;

    @TempDir
    Path dir;

    /** Records what the arena reported, as the bookkeeper would see it. */
    static final class RecordingListener implements ShmPlacementListener {
        final List<String> segments = new CopyOnWriteArrayList<>();
        final ConcurrentHashMap<Long, long[]> placements = new ConcurrentHashMap<>();

        @Override
        public void registerShmSegment(int index, String name) {
            assertThat(index).as("segments register in order, once each").isEqualTo(segments.size());
            segments.add(name);
        }

        @Override
        public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
            for (int i = 0; i < uuids.length; i++) {
                placements.put(uuids[i], new long[] {segmentIdxs[i], offsets[i]});
            }
        }
    }

    private ShmArena arena(long segmentBytes, int maxSegments, ShmPlacementListener listener) {
        return new ShmArena(new ArenaSettings(dir, "worker-0", segmentBytes, maxSegments, 256), listener);
    }

    @Test
    void concurrentAllocateAndFreeNeverOverlapAndReturnToEmpty() throws Exception {
        long seed = Seeds.of("ArenaPlacementTests");
        RecordingListener listener = new RecordingListener();
        try (ShmArena arena = arena(256 * KIB, 4, listener)) {
            AtomicLong uuids = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Random random = new Random(seed + t);
                done.add(pool.submit(() -> {
                    List<ArenaSlot> mine = new ArrayList<>();
                    for (int op = 0; op < 2000; op++) {
                        if (mine.isEmpty() || random.nextInt(3) != 0) {
                            long uuid = uuids.incrementAndGet();
                            ArenaSlot slot = arena.allocate(uuid, 1 + random.nextInt(24 * KIB));
                            fill(slot);
                            mine.add(slot);
                        } else {
                            ArenaSlot slot = mine.remove(random.nextInt(mine.size()));
                            // another thread's overlapping slot would have overwritten the pattern
                            assertThat(intact(slot)).as("%s (seed %d)", slot, seed).isTrue();
                            arena.free(slot);
                        }
                    }
                    for (ArenaSlot slot : mine) {
                        assertThat(intact(slot)).as("%s (seed %d)", slot, seed).isTrue();
                    }
                    assertNoOverlap(mine);
                    mine.forEach(arena::free);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
            ArenaOccupancy empty = arena.occupancy();
            assertThat(empty.usedBytes()).isZero();
            assertThat(empty.liveSlots()).isZero();
            assertThat(empty.spilledFiles()).isZero();
            assertThat(listener.segments).hasSize(empty.segments());
            // coalescing: every segment is one free extent again, so a whole-segment slot fits in segment 0
            ArenaSlot whole = arena.allocate(-1, 256 * KIB);
            assertThat(whole.segmentIndex()).isZero();
            assertThat(whole.offset()).isZero();
        }
    }

    @Test
    void beyondTheCapTensorsSpillToTheirOwnFileReportedAsMinusOne() throws Exception {
        RecordingListener listener = new RecordingListener();
        try (ShmArena arena = arena(64 * KIB, 1, listener)) {
            ArenaSlot a = arena.allocate(1, 40 * KIB);
            ArenaSlot b = arena.allocate(2, 40 * KIB); // segment full, cap reached
            ArenaSlot huge = arena.allocate(3, 100 * KIB); // larger than a segment
            assertThat(a.segmentIndex()).isZero();
            assertThat(b.spilled()).isTrue();
            assertThat(huge.spilled()).isTrue();
            assertThat(listener.segments).containsExactly(a.fileName());
            assertThat(listener.placements).as("placement waits for reportPlacement").isEmpty();
            arena.reportPlacement(List.of(a, b, huge));
            assertThat(listener.placements.get(2L)).containsExactly(-1, 0);
            assertThat(listener.placements.get(1L)).containsExactly(0, 0);
            assertThat(Files.size(dir.resolve(b.fileName()))).isEqualTo(40 * KIB);
            assertThat(arena.occupancy()).isEqualTo(new ArenaOccupancy(64 * KIB + 140 * KIB, 40 * KIB + 140 * KIB, 3, 1, 2));

            arena.free(b);
            assertThat(dir.resolve(b.fileName())).doesNotExist();
            arena.free(a);
            ArenaSlot c = arena.allocate(4, 40 * KIB); // the freed slot is back in the segment
            assertThat(c.segmentIndex()).isZero();
        }
        assertThat(Files.list(dir)).as("close removes segments and spill files").isEmpty();
    }

    @Test
    void freeingASlotTwiceIsAnErrorNotASilentReturn() {
        try (ShmArena arena = arena(64 * KIB, 1, ShmPlacementListener.NONE)) {
            ArenaSlot a = arena.allocate(1, 1000);
            arena.free(a);
            assertThatThrownBy(() -> arena.free(a)).isInstanceOf(ArenaException.class)
                    .extracting(e -> ((ArenaException) e).reason()).isEqualTo(ArenaException.Reason.NOT_LIVE);
            arena.allocate(2, 10);
            assertThatThrownBy(() -> arena.allocate(2, 10)).isInstanceOf(ArenaException.class)
                    .extracting(e -> ((ArenaException) e).reason()).isEqualTo(ArenaException.Reason.DUPLICATE_UUID);
        }
    }

    @Test
    void readerSeesTheProducersBytesThroughItsOwnReadOnlyMapping() {
        try (ShmArena arena = arena(64 * KIB, 1, ShmPlacementListener.NONE);
             ArenaReader reader = new ArenaReader(dir)) {
            ArenaSlot inSegment = arena.allocate(7, 3000);
            ArenaSlot spilled = arena.allocate(8, 100 * KIB);
            fill(inSegment);
            fill(spilled);
            for (ArenaSlot slot : List.of(inSegment, spilled)) {
                assertThat(reader.visible(slot.fileName())).isTrue();
                ByteBuffer copy = ByteBuffer.allocateDirect((int) slot.nbytes());
                reader.read(slot.fileName(), slot.offset(), (int) slot.nbytes(), copy);
                assertThat(copy.position()).isEqualTo(slot.nbytes());
                assertThat(copy.flip()).isEqualTo(slot.buffer());
            }
            assertThat(reader.visible("mstar.worker-9.1.abc.seg0")).isFalse();
            String name = inSegment.fileName();
            arena.close();
            assertThat(reader.visible(name)).as("a closed producer's cached mapping is not trusted").isFalse();
        }
    }

    static void fill(ArenaSlot slot) {
        slot.buffer().put(expected(slot));
    }

    static boolean intact(ArenaSlot slot) {
        return slot.buffer().mismatch(ByteBuffer.wrap(expected(slot))) < 0;
    }

    private static byte[] expected(ArenaSlot slot) {
        byte[] bytes = new byte[(int) slot.nbytes()];
        java.util.Arrays.fill(bytes, (byte) (slot.uuid() * 31 + 7));
        return bytes;
    }

    private static void assertNoOverlap(List<ArenaSlot> slots) {
        List<ArenaSlot> placed = new ArrayList<>(slots.stream().filter(s -> !s.spilled()).toList());
        placed.sort(Comparator.comparingInt(ArenaSlot::segmentIndex).thenComparingLong(ArenaSlot::offset));
        for (int i = 1; i < placed.size(); i++) {
            ArenaSlot prev = placed.get(i - 1);
            ArenaSlot next = placed.get(i);
            if (prev.segmentIndex() == next.segmentIndex()) {
                assertThat(prev.offset() + prev.nbytes()).as("%s overlaps %s", prev, next).isLessThanOrEqualTo(next.offset());
            }
        }
    }
}
