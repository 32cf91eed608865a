package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import tools.jackson.databind.JsonNode;

/**
 * {@code bin/mstar} as a user runs it: a real subprocess, detached service processes, an {@code up} that brings a
 * partly killed stack back, and a {@code down} that leaves nothing behind. Uses its own state directory so a
 * developer's running {@code .mstar} stack is never touched.
 */
@Tag("kafka")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalStackCliTests {

    private static final Duration UP_TIMEOUT = Duration.ofSeconds(240);
    private static final String ESC = "\u001b";
    private static final List<String> COMMANDS = List.of("up", "status", "down", "help");
    private static final List<String> OPTIONS = List.of("--workers", "--conductor-port", "--base-port", "--topic-prefix",
            "--timeout", "--state-dir", "--rebuild");

    private Path root;
    private Path stateDir;
    /** A stand-in {@code mvn}: writes escape sequences as Maven 3.8's -q does, and leaves a mark that it ran. */
    private Path fakeMavenDir;
    private Path fakeMavenRan;

    /** What {@code bin/mstar} printed (standard output and error, or only one of them) and how it exited. */
    record Run(int exitCode, String output) {
    }

    @BeforeAll
    void cleanStateDir() throws IOException {
        root = ProjectLayout.discover().root();
        stateDir = root.resolve("e2e-tests/target/e2e-stacks/LocalStackCliTests");
        KafkaBroker.deleteRecursively(stateDir);
        fakeMavenDir = Files.createDirectories(stateDir.resolve("fake-maven"));
        fakeMavenRan = stateDir.resolve("fake-maven-ran");
        Path mvn = fakeMavenDir.resolve("mvn");
        Files.writeString(mvn, String.join("\n",
                "#!/usr/bin/env bash",
                "touch '" + fakeMavenRan + "'",
                "printf '\\033[0m\\033[0m'",
                "printf '\\033[1;33m[WARNING]\\033[m a warning of the build\\n' >&2",
                "printf '\\033[0m' >&2",
                ""));
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterAll
    void downWhateverIsLeft() throws Exception {
        // A failed assertion above must not leave the stack running.
        mstar(Duration.ofSeconds(90), "down");
    }

    @Test
    @Order(0)
    void helpPrintsEveryCommandAndOptionWithoutABuildAndAnUnknownCommandIsAUsageError() throws Exception {
        for (List<String> args : List.of(List.of("help"), List.of("--help"), List.of("-h"), List.of("up", "--help"),
                List.of("--rebuild", "help"))) {
            Run help = mstar(Duration.ofSeconds(60), Stream.STDOUT, withFakeMaven(), args.toArray(String[]::new));

            assertThat(help.exitCode()).as("bin/mstar %s: %s", args, help.output()).isZero();
            for (String word : COMMANDS) {
                assertThat(help.output().lines()).as("the line of command %s", word)
                        .anyMatch(line -> line.startsWith("  " + word + " "));
            }
            for (String option : OPTIONS) {
                assertThat(help.output().lines()).as("the line of option %s", option)
                        .anyMatch(line -> line.startsWith("  " + option + " "));
            }
        }
        assertThat(fakeMavenRan).as("a build for help").doesNotExist();

        Run unknown = mstar(Duration.ofSeconds(60), Stream.STDERR, withFakeMaven(), "frobnicate");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.output()).contains("unknown command frobnicate").contains("usage: bin/mstar");
        assertThat(mstar(Duration.ofSeconds(60), Stream.STDOUT, withFakeMaven(), "frobnicate").output())
                .as("standard output of an unknown command").isEmpty();
        assertThat(fakeMavenRan).as("a build for an unknown command").doesNotExist();
    }

    @Test
    @Order(1)
    void upStartsADetachedStackThatStatusReportsAndDownRemovesCompletely() throws Exception {
        // With a (stand-in) build first: its escape sequences must not reach up's output.
        Run up = mstar(UP_TIMEOUT, Stream.BOTH, withFakeMaven(), "--rebuild", "up", "--workers", "1",
                "--conductor-port", "0");
        assertThat(up.exitCode()).as(up.output()).isZero();
        assertThat(fakeMavenRan).as("the stand-in build").exists();
        assertThat(up.output()).contains("M* local stack is up (1 workers").contains("conductor  http://127.0.0.1:")
                .contains("worker-0   http://127.0.0.1:").contains("kafka      127.0.0.1:")
                .contains("a warning of the build");
        assertThat(up.output()).as("escape sequences in the output of up").doesNotContain(ESC);

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
        assertThat(again.output()).contains("already up");
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

    @Test
    @Order(3)
    void upAfterAWorkerIsKilledRestartsJustThatWorkerOnItsPortAndTheStackServesAgain() throws Exception {
        Run up = mstar(UP_TIMEOUT, "up", "--workers", "2", "--conductor-port", "0");
        assertThat(up.exitCode()).as(up.output()).isZero();
        Path runDir = stateDir.resolve("run");
        Map<String, ProcessRecord> before = byName(ProcessRecord.readAll(runDir));
        assertThat(before.keySet()).containsExactlyInAnyOrder("conductor", "worker-0", "worker-1", "kafka");
        ProcessRecord killed = before.get("worker-1");
        assertThat(killed.ports()).as("worker-1's recorded ports").hasSize(1);

        ProcessHandle victim = killed.liveHandle().orElseThrow();
        assertThat(victim.destroyForcibly()).as("SIGKILL sent").isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> killed.liveHandle().isEmpty());

        // No options: the stack keeps those of the up that started it.
        Run again = mstar(UP_TIMEOUT, "up");

        assertThat(again.exitCode()).as(again.output()).isZero();
        assertThat(again.output()).contains("M* local stack is up (2 workers").contains("restarted worker-1")
                .contains("worker-1   " + killed.probe().replace("/actuator/health/readiness", "/actuator"))
                .doesNotContain("partly running").doesNotContain(ESC);
        Map<String, ProcessRecord> after = byName(ProcessRecord.readAll(runDir));
        assertThat(after.keySet()).isEqualTo(before.keySet());
        for (String survivor : List.of("conductor", "worker-0", "kafka")) {
            assertThat(after.get(survivor)).as("record of %s", survivor).isEqualTo(before.get(survivor));
            assertThat(after.get(survivor).liveHandle()).as("%s after up", survivor).isPresent();
        }
        ProcessRecord restarted = after.get("worker-1");
        assertThat(restarted.pid()).as("pid of the restarted worker-1").isNotEqualTo(killed.pid());
        assertThat(restarted.liveHandle()).as("restarted worker-1").isPresent();
        assertThat(restarted.ports()).as("worker-1's port").isEqualTo(killed.ports());
        assertThat(restarted.probe()).isEqualTo(killed.probe());
        assertThat(restarted).isEqualTo(killed.withPid(restarted.pid()));

        // counter's prefill is split across both workers: the request needs the restarted one.
        String conductor = after.get("conductor").probe().replace("/actuator/health/readiness", "");
        try (MstarClient client = new MstarClient(conductor)) {
            HttpResponse<String> response = client.post("/v1/requests",
                    MstarClient.counterRequest("cli-restart-" + System.nanoTime(), List.of(2, 3), 5, null, false)
                            .toString(), Map.of());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            List<JsonNode> outputs = new ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            Outputs.assertMatches("cli-restart", outputs, CounterOracle.of(List.of(2, 3), 5, null));
        }

        Run third = mstar(Duration.ofSeconds(60), "up");
        assertThat(third.exitCode()).as(third.output()).isZero();
        assertThat(third.output()).contains("already up");
        assertThat(byName(ProcessRecord.readAll(runDir))).isEqualTo(after);

        Run down = mstar(Duration.ofSeconds(90), "down");
        assertThat(down.exitCode()).as(down.output()).isZero();
        assertThat(ProcessRecord.readAll(runDir)).isEmpty();
        assertThat(runDir.resolve(CliOptions.RECORD_FILE)).doesNotExist();
    }

    private static Map<String, ProcessRecord> byName(List<ProcessRecord> records) {
        return records.stream().collect(Collectors.toMap(ProcessRecord::name, r -> r, (a, b) -> a, LinkedHashMap::new));
    }

    /** Which of the command's streams {@link Run#output} holds. */
    enum Stream { BOTH, STDOUT, STDERR }

    /** The stand-in {@code mvn} first on the PATH, and a forced build (which only up runs). */
    private Map<String, String> withFakeMaven() {
        return Map.of("PATH", fakeMavenDir + ":" + System.getenv("PATH"), "MSTAR_REBUILD", "1");
    }

    private Run mstar(Duration timeout, String... args) throws Exception {
        return mstar(timeout, Stream.BOTH, Map.of(), args);
    }

    private Run mstar(Duration timeout, Stream stream, Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/mstar").toString()));
        command.addAll(List.of(args));
        command.addAll(List.of("--state-dir", stateDir.toString()));
        Files.createDirectories(stateDir);
        String name = args[0].replaceAll("[^a-z]", "");
        Path output = Files.createTempFile(stateDir, "mstar-" + name + "-", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).directory(root.toFile());
        builder.environment().putAll(env);
        switch (stream) {
            case BOTH -> builder.redirectErrorStream(true).redirectOutput(output.toFile());
            case STDOUT -> builder.redirectOutput(output.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD);
            case STDERR -> builder.redirectError(output.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        Process process = builder.start();
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
