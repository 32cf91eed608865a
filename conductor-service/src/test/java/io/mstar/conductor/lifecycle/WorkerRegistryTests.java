package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;

class WorkerRegistryTests {

    private static final long SECOND = 1_000_000_000L;
    private static final EntityId W0 = EntityId.worker(0);
    private static final EntityId W1 = EntityId.worker(1);
    private static final Incarnation FIRST = new Incarnation("aaaa");
    private static final Incarnation SECOND_LIFE = new Incarnation("bbbb");

    private final SimpleMeterRegistry meterRegistry = new SimpleMeterRegistry();
    private WorkerRegistry registry;

    @BeforeEach
    void setUp() {
        WorkerRegistryMeters meters = new WorkerRegistryMeters(meterRegistry, List.of(W0, W1));
        registry = new WorkerRegistry(List.of(W0, W1), Duration.ofSeconds(6), meters);
        registry.bindOwner();
        meters.bindStates(() -> registry.snapshot(0).states());
    }

    @Test
    void configuredWorkersStartAsStartingAndNotAllReady() {
        assertThat(registry.state(W0)).isEqualTo(WorkerLifecycle.STARTING);
        assertThat(registry.snapshot(0).allReady()).isFalse();
    }

    @Test
    void everyConfiguredWorkerReportingMakesAllReady() {
        assertThat(registry.onSetupDone("worker-0", FIRST, 0)).isEqualTo(WorkerEvent.SETUP_DONE);
        assertThat(registry.snapshot(0).allReady()).isFalse();
        registry.onSetupDone("worker-1", FIRST, 0);

        assertThat(registry.snapshot(0).allReady()).isTrue();
        assertThat(meterRegistry.get(WorkerRegistryMeters.WORKERS).tag("state", "ready").gauge().value()).isEqualTo(2);
    }

    @Test
    void aSilentWorkerIsLostOnlyAfterTheTimeout() {
        registry.onSetupDone("worker-0", FIRST, 0);
        registry.expire(6 * SECOND);
        assertThat(registry.state(W0)).isEqualTo(WorkerLifecycle.READY);

        registry.expire(6 * SECOND + 1);

        assertThat(registry.state(W0)).isEqualTo(WorkerLifecycle.LOST);
        assertThat(meterRegistry.get(WorkerRegistryMeters.LOSSES).tag("worker", "worker-0").counter().count()).isEqualTo(1);
    }

    @Test
    void heartbeatsKeepAWorkerReady() {
        registry.onSetupDone("worker-0", FIRST, 0);
        registry.onSetupDone("worker-0", FIRST, 5 * SECOND);
        registry.expire(10 * SECOND);

        assertThat(registry.state(W0)).isEqualTo(WorkerLifecycle.READY);
    }

    @Test
    void aNeverHeardWorkerStaysStartingInsteadOfLost() {
        registry.expire(60 * SECOND);

        assertThat(registry.state(W1)).isEqualTo(WorkerLifecycle.STARTING);
    }

    @Test
    void heartbeatAgeIsTheSilenceAtTheLastSnapshotAndNaNBeforeTheFirstWord() {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
        SimpleMeterRegistry meterRegistry = new SimpleMeterRegistry();
        WorkerRegistryMeters meters = new WorkerRegistryMeters(meterRegistry, List.of(W0, W1));
        meters.bindSilences(() -> registry.snapshot(now.get()).silences());
        registry.onSetupDone("worker-0", FIRST, SECOND);
        now.set(SECOND + 2 * SECOND + SECOND / 2);

        assertThat(meterRegistry.get(WorkerRegistryMeters.HEARTBEAT_AGE).tag("worker", "worker-0").gauge().value())
                .isEqualTo(2.5);
        assertThat(meterRegistry.get(WorkerRegistryMeters.HEARTBEAT_AGE).tag("worker", "worker-1").gauge().value())
                .isNaN();

        registry.onSetupDone("worker-0", FIRST, now.get());
        assertThat(meterRegistry.get(WorkerRegistryMeters.HEARTBEAT_AGE).tag("worker", "worker-0").gauge().value())
                .isZero();
    }

    @Test
    void aNewIncarnationIsCountedAsARestart() {
        registry.onSetupDone("worker-1", FIRST, 0);

        assertThat(registry.onSetupDone("worker-1", SECOND_LIFE, SECOND)).isEqualTo(WorkerEvent.RESTARTED);
        assertThat(registry.state(W1)).isEqualTo(WorkerLifecycle.READY);
        assertThat(meterRegistry.get(WorkerRegistryMeters.RESTARTS).tag("worker", "worker-1").counter().count()).isEqualTo(1);
        assertThat(registry.snapshot(SECOND).workers().get(W1).incarnation()).isEqualTo(SECOND_LIFE);
    }

    @Test
    void aLostWorkerComesBackWithItsNextSetupDone() {
        registry.onSetupDone("worker-0", FIRST, 0);
        registry.expire(7 * SECOND);

        registry.onSetupDone("worker-0", FIRST, 8 * SECOND);

        assertThat(registry.state(W0)).isEqualTo(WorkerLifecycle.READY);
    }

    @Test
    void unconfiguredAndMalformedWorkerIdsAreIgnored() {
        assertThat(registry.onSetupDone("worker-9", FIRST, 0)).isNull();
        assertThat(registry.onSetupDone("not-a-worker", FIRST, 0)).isNull();
        assertThat(registry.snapshot(0).workers()).containsOnlyKeys(W0, W1);
    }

    @Test
    void anotherThreadCannotTouchTheRegistry() throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread intruder = new Thread(() -> {
            try {
                registry.onSetupDone("worker-0", FIRST, 0);
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "intruder");
        intruder.start();
        intruder.join();

        assertThat(failure.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("intruder");
    }

    @Test
    void stateOfAnUnconfiguredWorkerIsAnError() {
        assertThatThrownBy(() -> registry.state(EntityId.worker(5))).isInstanceOf(IllegalArgumentException.class);
    }
}
