package io.mstar.tensor.arena;

import static org.assertj.core.api.Assertions.assertThat;

import io.mstar.tensor.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The arena between real processes: a second JVM reads what this one wrote; a dead one's files go. */
class ArenaCrossProcessTests {

    @TempDir
    Path dir;

    @Test
    void secondProcessReadsTensorsWrittenByTheFirst() throws Exception {
        try (ShmArena arena = new ShmArena(new ArenaSettings(dir, "worker-0", 1 << 20, 1, 256),
                ShmPlacementListener.NONE)) {
            ArenaSlot inSegment = arena.allocate(11, 300_001);
            ArenaSlot spilled = arena.allocate(12, 2 << 20);
            ArenaSlots.pattern(inSegment);
            ArenaSlots.pattern(spilled);
            for (ArenaSlot slot : List.of(inSegment, spilled)) {
                try (ChildJvm child = ChildJvm.start(ArenaReadMain.class, dir.toString(), slot.fileName(),
                        Long.toString(slot.offset()), Long.toString(slot.nbytes()), Long.toString(slot.uuid()))) {
                    assertThat(child.readLine()).isEqualTo("OK " + slot.nbytes());
                    assertThat(child.waitFor(30)).isZero();
                }
            }
        }
    }

    @Test
    void childThatSeesWrongBytesSaysSo() throws Exception {
        // the check above can fail: the same reader against a slot with a different pattern
        try (ShmArena arena = new ShmArena(new ArenaSettings(dir, "worker-0", 1 << 20, 1, 256),
                ShmPlacementListener.NONE)) {
            ArenaSlot slot = arena.allocate(21, 4096);
            ArenaSlots.pattern(slot);
            try (ChildJvm child = ChildJvm.start(ArenaReadMain.class, dir.toString(), slot.fileName(),
                    Long.toString(slot.offset()), "4096", "22")) {
                assertThat(child.readLine()).startsWith("MISMATCH");
                assertThat(child.waitFor(30)).isEqualTo(3);
            }
        }
    }

    @Test
    void startUpSweepRemovesADeadOwnersFilesAndKeepsALiveOnes() throws Exception {
        try (ShmArena mine = new ShmArena(new ArenaSettings(dir, "worker-1", 64 << 10, 1, 256),
                ShmPlacementListener.NONE)) {
            ArenaSlot kept = mine.allocate(1, 100);
            ArenaSlot keptSpill = mine.allocate(2, 128 << 10);
            long deadPid;
            try (ChildJvm child = ChildJvm.start(ArenaLeakMain.class, dir.toString())) {
                deadPid = child.pid();
                assertThat(child.readLine()).isEqualTo("LEAKED");
                assertThat(child.waitFor(30)).isEqualTo(0);
            }
            List<String> leaked = names().stream().filter(n -> n.contains("." + deadPid + ".")).toList();
            assertThat(leaked).hasSize(2); // one segment, one spill file, never closed
            Files.writeString(dir.resolve("not-an-arena-file"), "x");

            List<String> removed = ShmArena.sweepDeadOwners(dir);

            assertThat(removed).containsExactlyInAnyOrderElementsOf(leaked);
            assertThat(names()).containsExactlyInAnyOrder(kept.fileName(), keptSpill.fileName(), "not-an-arena-file");
        }
    }

    private List<String> names() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).toList();
        }
    }
}
