package io.mstar.tensor.arena;

import static org.assertj.core.api.Assertions.assertThat;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.bookkeeping.FastTensorBookkeeping;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

/** The arena's reports land in a real bookkeeper: descriptors name the segment a reader opens. */
class ArenaBookkeepingTests {

    @TempDir
    Path dir;

    static Stream<TensorBookkeeping> bookkeepers() {
        return Stream.of(new PlainTensorBookkeeping(), new FastTensorBookkeeping());
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void placementReachesTheDescriptorAndSpilledTensorsHaveNoSegment(TensorBookkeeping books) {
        try (ShmArena arena = new ShmArena(new ArenaSettings(dir, "worker-0", 64 << 10, 2, 256),
                ShmPlacementListener.of(books))) {
            ArenaSlot a = arena.allocate(1, 1000);
            ArenaSlot b = arena.allocate(2, (64 << 10) - 512); // does not fit beside a: second segment
            ArenaSlot c = arena.allocate(3, 100 << 10); // spilled
            for (ArenaSlot s : List.of(a, b, c)) {
                books.putTensor(s.uuid(), new TensorPointerInfo(s.uuid(), List.of(s.nbytes()), List.of(1L), "uint8",
                        s.nbytes(), 0L, "127.0.0.1:7000", "worker-0"));
            }
            arena.reportPlacement(List.of(a, b, c));

            assertThat(books.getInfo(1).shmSegment()).isEqualTo(a.fileName());
            assertThat(books.getInfo(1).shmOffset()).isEqualTo(a.offset());
            assertThat(books.getInfo(2).shmSegment()).isEqualTo(b.fileName()).isNotEqualTo(a.fileName());
            assertThat(books.getInfo(2).shmOffset()).isEqualTo(b.offset());
            assertThat(books.getInfo(3).shmSegment()).as("spilled: read over HTTP").isNull();
        }
    }
}
