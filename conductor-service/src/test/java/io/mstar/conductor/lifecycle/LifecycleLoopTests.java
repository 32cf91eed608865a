package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.mstar.deployment.ConfigDigest;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Received;
import io.mstar.wire.AbortRequest;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.SetupDone;

class LifecycleLoopTests {

    private static final EntityId W0 = EntityId.worker(0);
    private ConductorHarness harness;
    private LifecycleLoop loop;

    @BeforeEach
    void start() throws Exception {
        harness = new ConductorHarness(io.mstar.deployment.DeploymentConfig.parse(
                "models:\n  - name: counter\n    node_groups:\n      - node_names: [embed, offset, detok, count, step]\n"
                        + "        workers: [0]\n", "test"), Duration.ofMillis(300), Duration.ofSeconds(5));
        loop = harness.loop;
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    @Test
    void deliveredSetupDoneIsPublishedInTheNextSnapshot() {
        loop.deliver(received(new SetupDone("worker-0"), Incarnation.random()));

        await().atMost(Duration.ofSeconds(5)).until(() -> loop.snapshot() != null && loop.snapshot().allReady());
    }

    @Test
    void theLoopDeclaresASilentWorkerLostOnItsOwn() {
        loop.deliver(received(new SetupDone("worker-0"), Incarnation.random()));

        await().atMost(Duration.ofSeconds(5)).until(() -> loop.snapshot() != null
                && loop.snapshot().workers().get(W0).state() == WorkerLifecycle.LOST);
    }

    @Test
    void askRunsOnTheLoopThread() {
        assertThat(loop.ask(registry -> Thread.currentThread().getName()).block(Duration.ofSeconds(5)))
                .isEqualTo(LifecycleLoop.THREAD_NAME);
    }

    @Test
    void aFailingCommandDoesNotStopTheLoop() {
        loop.deliver(received(new AbortRequest("r-1"), Incarnation.random()));
        // A SetupDone naming another worker than its sender and an unconfigured id are tolerated too.
        loop.deliver(received(new SetupDone("worker-9"), Incarnation.random()));
        assertThat(loop.ask(registry -> { throw new IllegalStateException("boom"); }).onErrorReturn("failed")
                .block(Duration.ofSeconds(5))).isEqualTo("failed");

        assertThat(loop.ask(registry -> registry.state(W0)).block(Duration.ofSeconds(5))).isEqualTo(WorkerLifecycle.STARTING);
        await().atMost(Duration.ofSeconds(2)).until(() -> loop.heartbeatAge().compareTo(Duration.ofMillis(500)) < 0);
    }

    @Test
    void stopEndsTheThreadAndReportsNotRunning() {
        Thread owner = loop.ask(registry -> Thread.currentThread()).block(Duration.ofSeconds(5));
        assertThat(owner.isAlive()).isTrue();

        loop.stop();

        assertThat(loop.isRunning()).isFalse();
        assertThat(owner.isAlive()).isFalse();
    }

    private static Received<ConductorMessage> received(io.mstar.wire.ConductorMessageBody body, Incarnation incarnation) {
        return new Received<>(ConductorMessage.of(body),
                new ControlHeaders.Stamp(W0, incarnation, 0L, new ConfigDigest("aa")));
    }
}
