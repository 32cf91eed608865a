package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pid record round-trips, and recognises its process by command line, not by PID alone. */
class ProcessRecordTests {

    @TempDir
    Path runDir;

    @Test
    void recordReadsBackAsWritten() {
        ProcessRecord record = new ProcessRecord("worker-3", 4242, "http://127.0.0.1:9/actuator/health/readiness",
                List.of("/usr/bin/java", "-jar", "/x/worker-service-exec.jar", "--mstar.worker.id=3"));
        record.write(runDir);

        assertThat(ProcessRecord.readAll(runDir)).containsExactly(record);
        record.delete(runDir);
        assertThat(ProcessRecord.readAll(runDir)).isEmpty();
    }

    @Test
    void restartDetailsReadBackAsWrittenAndARecordWithoutThemStillReads() throws Exception {
        ProcessRecord full = new ProcessRecord("kafka", 77, "kafka:127.0.0.1:12000",
                List.of("/usr/bin/java", "kafka.Kafka", "/s/kafka-data/server.properties"), Path.of("/s/kafka-data"),
                Path.of("/s/logs/kafka.log"), List.of(12000, 12001));
        full.write(runDir);
        assertThat(ProcessRecord.readAll(runDir)).containsExactly(full);
        assertThat(full.withPid(78)).isEqualTo(new ProcessRecord("kafka", 78, full.probe(), full.command(),
                full.workingDir(), full.logFile(), full.ports()));

        // An older launcher's record: no dir, log or ports; the state directory's defaults stand in.
        java.nio.file.Files.writeString(runDir.resolve("worker-0.pid"),
                "pid=5\nname=worker-0\nprobe=http://127.0.0.1:9/actuator/health/readiness\ncommand:\njava\n-jar\nw.jar\n");
        ProcessRecord old = ProcessRecord.readAll(runDir).get(0);
        assertThat(old.workingDir()).isNull();
        assertThat(old.ports()).isEmpty();
        assertThat(old.logFile(runDir)).isEqualTo(runDir.toAbsolutePath().getParent().resolve("logs/worker-0.log"));
    }

    @Test
    void relaunchStartsTheRecordedCommandAgainAndRecordsTheNewPid() throws Exception {
        Path workDir = java.nio.file.Files.createDirectories(runDir.resolve("work"));
        Process gone = new ProcessBuilder("true").start();
        assertThat(gone.waitFor(10, TimeUnit.SECONDS)).isTrue();
        ProcessRecord dead = new ProcessRecord("sleeper", gone.pid(), "kafka:127.0.0.1:1", List.of("sleep", "302"),
                workDir, runDir.resolve("logs/sleeper.log"), List.of());
        dead.write(runDir);
        assertThat(dead.liveHandle()).isEmpty();

        ManagedProcess process = dead.relaunch(runDir);
        try {
            ProcessRecord fresh = ProcessRecord.readAll(runDir).get(0);
            assertThat(fresh).isEqualTo(dead.withPid(process.pid()));
            assertThat(fresh.liveHandle()).isPresent();
            assertThat(process.logFile()).exists();
        } finally {
            process.stop(java.time.Duration.ofSeconds(10));
        }
    }

    @Test
    void liveProcessIsRecognisedOnlyWhileItRunsTheRecordedArguments() throws Exception {
        List<String> command = new ArrayList<>(List.of("sleep", "300"));
        Process sleeper = new ProcessBuilder(command).start();
        try {
            ProcessRecord same = new ProcessRecord("sleeper", sleeper.pid(), "kafka:127.0.0.1:1", command);
            ProcessRecord other = new ProcessRecord("sleeper", sleeper.pid(), "kafka:127.0.0.1:1",
                    List.of("sleep", "301"));

            assertThat(same.liveHandle()).isPresent();
            assertThat(other.liveHandle()).isEmpty();
            assertThat(other.stop(java.time.Duration.ofSeconds(1))).isFalse();
            assertThat(sleeper.isAlive()).isTrue();

            assertThat(same.stop(java.time.Duration.ofSeconds(10))).isTrue();
            assertThat(sleeper.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(same.liveHandle()).isEmpty();
        } finally {
            sleeper.destroyForcibly();
        }
    }
}
