package io.mstar.repository;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The worker engine stays a coordinator of small parts (docs/worker-runtime.md#the-engine-and-its-parts): no class of
 * {@code io.mstar.worker.engine} is over {@value #ENGINE_MAX_LINES} lines, so a part that grows another job is cut out
 * before it becomes the next six-job class.
 */
class ClassSizeTests {

    static final int ENGINE_MAX_LINES = 500;
    private static final String ENGINE = "worker-service/src/main/java/io/mstar/worker/engine/";

    private static Repository repo;

    @BeforeAll
    static void findRepository() {
        repo = Repository.find(Path.of("").toAbsolutePath(), false);
    }

    @Test
    void noWorkerEngineClassIsOverFiveHundredLines() {
        List<String> engine = repo.checkedFiles().stream()
                .filter(f -> f.startsWith(ENGINE) && f.endsWith(".java")).toList();
        List<String> over = new ArrayList<>();
        for (String file : engine) {
            long lines = repo.text(file).content().lines().count();
            if (lines > ENGINE_MAX_LINES) {
                over.add(file + ": " + lines + " lines");
            }
        }
        assertThat(engine).as("engine sources found (the filter reads the clone)").hasSizeGreaterThan(20);
        assertThat(over).as("worker engine classes over %d lines", ENGINE_MAX_LINES).isEmpty();
    }
}
