package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code bin/mstar} as a user runs it: a real subprocess, detached service processes, and a
 * {@code down} that leaves nothing behind. Uses its own state directory so a developer's running
 * {@code .mstar} stack is never touched.
 */
@Tag("kafka")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalStackCliTests {

    private static final Duration UP_TIMEOUT = Duration.ofSeconds(240);

    private Path root;
    private Path stateDir;

    /** What {@code bin/mstar} printed and how it exited. */
    record Run(int exitCode, String output) {
    }

    @BeforeAll
    void cleanStateDir() throws IOException {
        root = ProjectLayout.discover().root();
        stateDir = root.resolve("e2e-tests/target/e2e-stacks/LocalStackCliTests");
        KafkaBroker.deleteRecursively(stateDir);
    }

    @AfterAll
    void downWhateverIsLeft() throws Exception {
        // A failed assertion above must not leave the stack running.
        mstar(Duration.ofSeconds(90), "down");
    }

    @Test
    @Order(1)
    void upStartsADetachedStackThatStatusReportsAndDownRemovesCompletely() throws Exception {
        Run up = mstar(UP_TIMEOUT, "up", "--workers", "1", "--conductor-port", "0");
        assertThat(up.exitCode()).as(up.output()).isZero();
        assertThat(up.output()).contains("M* local stack is up (1 workers").contains("conductor  http://127.0.0.1:")
                .contains("worker-0   http://127.0.0.1:").contains("kafka      127.0.0.1:");

        List<ProcessRecord> records = ProcessRecord.readAll(stateDir.resolve("run"));
        assertThat(records).extracting(ProcessRecord::name)
                .containsExactlyInAnyOrder("conductor", "worker-0", "kafka");
        List<ProcessHandle> processes = new ArrayList<>();
        for (ProcessRecord record : records) {
            processes.add(record.liveHandle().orElseThrow(
                    () -> new AssertionError(record.name() + " is not running after up returned")));
        }

        Run status = mstar(Duration.ofSeconds(60), "status");
        assertThat(status.exitCode()).as(status.output()).isZero();
        assertThat(status.output().lines().filter(line -> line.matches("\\s+\\S+\\s+\\d+\\s+yes\\s+yes\\s+.*")))
                .hasSize(3);

        Run again = mstar(Duration.ofSeconds(60), "up", "--workers", "1", "--conductor-port", "0");
        assertThat(again.exitCode()).as(again.output()).isZero();
        assertThat(again.output()).contains("already running");
        assertThat(ProcessRecord.readAll(stateDir.resolve("run"))).extracting(ProcessRecord::pid)
                .containsExactlyInAnyOrderElementsOf(records.stream().map(ProcessRecord::pid).toList());

        Run down = mstar(Duration.ofSeconds(90), "down");
        assertThat(down.exitCode()).as(down.output()).isZero();
        assertThat(down.output()).contains("stopped kafka").contains("stopped conductor").contains("stopped worker-0");
        assertThat(processes).as("processes after down").noneMatch(ProcessHandle::isAlive);
        assertThat(ProcessRecord.readAll(stateDir.resolve("run"))).isEmpty();
        assertThat(stateDir.resolve("kafka-data")).doesNotExist();

        Run statusAfter = mstar(Duration.ofSeconds(60), "status");
        assertThat(statusAfter.exitCode()).as(statusAfter.output()).isEqualTo(3);
    }

    @Test
    @Order(2)
    void downNeverSignalsAProcessWhosePidNoLongerRunsTheRecordedCommand() throws Exception {
        // A stranger that "inherited" a recorded PID: same number, another command line.
        Process stranger = new ProcessBuilder("sleep", "300").start();
        try {
            new ProcessRecord("worker-0", stranger.pid(), "http://127.0.0.1:1/actuator/health/readiness",
                    List.of("java", "-jar", root.resolve("worker-service/target/worker-service-exec.jar").toString(),
                            "--server.port=1")).write(stateDir.resolve("run"));

            Run down = mstar(Duration.ofSeconds(60), "down");

            assertThat(down.exitCode()).as(down.output()).isZero();
            assertThat(down.output()).contains("worker-0 (pid " + stranger.pid() + ") was no longer running");
            assertThat(stranger.isAlive()).as("the stranger after down").isTrue();
            assertThat(ProcessRecord.readAll(stateDir.resolve("run"))).isEmpty();
        } finally {
            stranger.destroy();
            stranger.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Run mstar(Duration timeout, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/mstar").toString()));
        command.addAll(List.of(args));
        command.addAll(List.of("--state-dir", stateDir.toString()));
        Files.createDirectories(stateDir);
        Path output = Files.createTempFile(stateDir, "mstar-" + args[0] + "-", ".out");
        Process process = new ProcessBuilder(command)
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            // SIGTERM lets the CLI's shutdown hook stop what an unfinished up had started.
            process.destroy();
            process.waitFor(60, TimeUnit.SECONDS);
            throw new AssertionError("bin/mstar " + String.join(" ", args) + " did not finish within "
                    + timeout.toSeconds() + " s:\n" + Files.readString(output, StandardCharsets.UTF_8));
        }
        String text = Files.readString(output, StandardCharsets.UTF_8);
        System.out.println("$ bin/mstar " + String.join(" ", args) + "  -> " + process.exitValue() + "\n" + text);
        return new Run(process.exitValue(), text);
    }
}
