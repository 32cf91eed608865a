package io.mstar.stack;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CliOptionsTests {

    @Test
    void upPutsTheConductorOnTheWellKnownPortByDefault() {
        CliOptions options = CliOptions.parse(new String[] {"up"});

        assertThat(options.conductorPort()).isEqualTo(8080);
        assertThat(options.basePort()).isZero();
        assertThat(options.workers()).isEqualTo(2);
    }

    @Test
    void conductorPortZeroAsksForAnyFreePort() {
        assertThat(CliOptions.parse(new String[] {"up", "--conductor-port", "0"}).conductorPort()).isZero();
        assertThat(CliOptions.parse(new String[] {"up", "--conductor-port", "18080"}).conductorPort()).isEqualTo(18080);
    }

    @Test
    void aNegativeOrNonNumericPortIsRefusedWithTheOptionNamed() {
        assertThatThrownBy(() -> CliOptions.parse(new String[] {"up", "--conductor-port", "-1"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--conductor-port");
        assertThatThrownBy(() -> CliOptions.parse(new String[] {"up", "--conductor-port", "x"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--conductor-port");
    }

    @Test
    void helpInAnyFormAndAnywhereIsTheHelpCommand() {
        for (String[] args : List.of(new String[] {"help"}, new String[] {"--help"}, new String[] {"-h"},
                new String[] {"up", "--workers", "3", "--help"}, new String[] {"down", "-h"})) {
            assertThat(CliOptions.parse(args).command()).as(String.join(" ", args)).isEqualTo("help");
        }
        assertThatThrownBy(() -> CliOptions.parse(new String[] {"restart"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown command restart");
    }

    @Test
    void usageHasOneLinePerCommandAndOption() {
        for (String word : List.of("up ", "status ", "down ", "help ", "--workers N ", "--conductor-port P ",
                "--base-port P ", "--topic-prefix X ", "--bind ADDRESS ", "--timeout SECONDS ", "--state-dir DIR ", "--rebuild ",
                "--deployment FILE ")) {
            assertThat(CliUsage.TEXT.lines().filter(line -> line.startsWith("  " + word))).as(word).hasSize(1);
        }
        assertThat(CliUsage.TEXT).doesNotContain("\u001b");
    }

    @Test
    void listenersBindLoopbackUnlessBindNamesAnAddress() {
        assertThat(CliOptions.parse(new String[] {"up"}).bindAddress()).isEqualTo("127.0.0.1");
        assertThat(CliOptions.parse(new String[] {"up", "--bind", "0.0.0.0"}).bindAddress()).isEqualTo("0.0.0.0");
        assertThatThrownBy(() -> CliOptions.parse(new String[] {"up", "--bind", "my-laptop.local"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--bind needs an IP address");
    }

    @Test
    void recordedOptionsReadBackAndOnlyExplicitlyGivenOnesConflict(@TempDir Path runDir) {
        CliOptions original = CliOptions.parse(new String[] {"up", "--workers", "3", "--conductor-port", "0",
                "--topic-prefix", "t1", "--timeout", "99"});
        assertThat(CliOptions.recorded(runDir)).isEmpty();
        original.record(runDir);

        CliOptions recorded = CliOptions.recorded(runDir).orElseThrow();
        assertThat(recorded.workers()).isEqualTo(3);
        assertThat(recorded.conductorPort()).isZero();
        assertThat(recorded.basePort()).isZero();
        assertThat(recorded.topicPrefix()).isEqualTo("t1");
        assertThat(recorded.timeoutSeconds()).isEqualTo(99);

        assertThat(CliOptions.parse(new String[] {"up"}).conflictsWith(recorded)).as("defaults only").isEmpty();
        assertThat(CliOptions.parse(new String[] {"up", "--workers", "3", "--timeout", "5"}).conflictsWith(recorded))
                .isEmpty();
        assertThat(CliOptions.parse(new String[] {"up", "--workers", "2", "--base-port", "20000"}).conflictsWith(recorded))
                .containsExactly("--workers 2 (the stack has 3)", "--base-port 20000 (the stack has 0)");

        CliOptions.forget(runDir);
        assertThat(CliOptions.recorded(runDir)).isEmpty();
    }

    @Test
    void aDeploymentFileSetsTheWorkersItNeedsUnlessMoreAreAskedForAndIsRecorded(@TempDir Path dir) throws Exception {
        Path file = java.nio.file.Files.writeString(dir.resolve("d.yaml"), """
                models:
                  - name: counter
                    node_groups: [{node_names: [embed, offset, detok, count, step], workers: [2]}]
                """);
        CliOptions options = LocalStackCli.withDeploymentWorkers(
                CliOptions.parse(new String[] {"up", "--deployment", file.toString()}));
        assertThat(options.workers()).isEqualTo(3);
        assertThat(options.deployment()).isEqualTo(file.toAbsolutePath().normalize());
        assertThat(LocalStackCli.withDeploymentWorkers(CliOptions.parse(new String[] {"up", "--deployment",
                file.toString(), "--workers", "4"})).workers()).isEqualTo(4);
        assertThatThrownBy(() -> LocalStackCli.withDeploymentWorkers(CliOptions.parse(new String[] {"up",
                "--deployment", file.toString(), "--workers", "2"}))).hasMessageContaining("places nodes on worker 2")
                .hasMessageContaining("start 3 workers");
        assertThatThrownBy(() -> LocalStackCli.withDeploymentWorkers(CliOptions.parse(new String[] {"up",
                "--deployment", dir.resolve("absent.yaml").toString()}))).hasMessageContaining("absent.yaml");

        Path runDir = dir.resolve("run");
        options.record(runDir);
        CliOptions recorded = CliOptions.recorded(runDir).orElseThrow();
        assertThat(recorded.deployment()).isEqualTo(options.deployment());
        assertThat(recorded.workers()).isEqualTo(3);
        assertThat(CliOptions.parse(new String[] {"up"}).conflictsWith(recorded)).isEmpty();
    }
}
