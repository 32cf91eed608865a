package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.mstar.messaging.Incarnation;

class ConductorWatchTests {

    private static final long MS = 1_000_000L;

    @Test
    void nothingIsLostBeforeTheConductorWasEverHeard() {
        ConductorWatch watch = new ConductorWatch(Duration.ofMillis(100));
        assertThat(watch.lostAt(10_000 * MS)).isFalse();
    }

    @Test
    void silenceForThreeIntervalsIsReportedOnceUntilHeardAgain() {
        ConductorWatch watch = new ConductorWatch(Duration.ofMillis(100));
        Incarnation conductor = Incarnation.random();
        assertThat(watch.heard(conductor, 0)).isEqualTo(ConductorWatch.Verdict.SAME);

        assertThat(watch.lostAt(299 * MS)).isFalse();
        assertThat(watch.lostAt(300 * MS)).isTrue();
        assertThat(watch.lostAt(900 * MS)).as("reported once per silence").isFalse();

        assertThat(watch.heard(conductor, 1000 * MS)).isEqualTo(ConductorWatch.Verdict.SAME);
        assertThat(watch.lostAt(1299 * MS)).isFalse();
        assertThat(watch.lostAt(1300 * MS)).isTrue();
    }

    @Test
    void theConductorsOwnIntervalSetsTheTimeout() {
        ConductorWatch watch = new ConductorWatch(Duration.ofSeconds(2));
        watch.heard(Incarnation.random(), 0);
        watch.expectEvery(Duration.ofMillis(50));
        assertThat(watch.lossTimeout()).isEqualTo(Duration.ofMillis(150));
        assertThat(watch.lostAt(150 * MS)).isTrue();
    }

    @Test
    void anotherIncarnationIsARestart() {
        ConductorWatch watch = new ConductorWatch(Duration.ofMillis(100));
        Incarnation first = Incarnation.random();
        watch.heard(first, 0);
        assertThat(watch.heard(first, 10 * MS)).isEqualTo(ConductorWatch.Verdict.SAME);
        Incarnation second = Incarnation.random();
        assertThat(watch.heard(second, 20 * MS)).isEqualTo(ConductorWatch.Verdict.RESTARTED);
        assertThat(watch.heard(second, 30 * MS)).isEqualTo(ConductorWatch.Verdict.SAME);
    }
}
