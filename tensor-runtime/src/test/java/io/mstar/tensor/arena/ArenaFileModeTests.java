package io.mstar.tensor.arena;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Segments and spill files hold users' tensors: only their owner may read them (docs/security.md). */
class ArenaFileModeTests {

    @TempDir
    Path dir;

    @Test
    void segmentsAndSpillFilesAreCreatedReadableByTheirOwnerAlone() throws IOException {
        try (ShmArena arena = new ShmArena(new ArenaSettings(dir, "worker-0", 64 << 10, 1, 256),
                ShmPlacementListener.NONE)) {
            ArenaSlot inSegment = arena.allocate(1, 1000);
            ArenaSlot spilled = arena.allocate(2, 100 << 10);
            assertThat(spilled.fileName()).as("the second tensor spills to its own file").isNotEqualTo(inSegment.fileName());

            List<Path> files;
            try (Stream<Path> listed = Files.list(dir)) {
                files = listed.toList();
            }
            assertThat(files).hasSize(2);
            for (Path file : files) {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as(file.toString())
                        .isEqualTo("rw-------");
            }
            arena.free(inSegment);
            arena.free(spilled);
        }
    }
}
