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
