package io.mstar.worker.tp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The tensor-parallel groups of one test ({@code @RegisterExtension}): made in a directory of the test's own, and
 * after the test closed, checking that every rank's device has no live buffer and every collective file is gone.
 */
public final class RankGroups implements AfterEachCallback {

    private final List<ThreadRanks> groups = new ArrayList<>();
    private Path directory;

    /** A group of {@code size} thread ranks whose collective bounds every wait by {@code timeout}. */
    public ThreadRanks of(int size, Duration timeout) throws IOException {
        if (directory == null) {
            directory = Files.createTempDirectory("mstar-tp-test");
        }
        ThreadRanks group = new ThreadRanks(directory, size, timeout);
        groups.add(group);
        return group;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            for (ThreadRanks group : groups) {
                group.close();
            }
        } finally {
            groups.clear();
            if (directory != null) {
                Files.deleteIfExists(directory); // empty, or the check above failed and says why
                directory = null;
            }
        }
    }
}
