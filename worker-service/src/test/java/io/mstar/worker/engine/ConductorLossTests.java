package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.ConfigDigest;
import io.mstar.graph.GraphEdge;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Received;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.transport.Transport;
import io.mstar.wire.ConductorHeartbeat;
import io.mstar.wire.NewRequest;
import io.mstar.wire.WorkerMessage;

/**
 * A worker whose conductor restarted, or fell silent, drops the requests that conductor drove: nobody else would
 * ever remove them. The request here is held mid-read by a stalling producer, so it cannot finish on its own.
 */
class ConductorLossTests extends TwoWorkers {

    private static final ConfigDigest CONFIG = new ConfigDigest("c".repeat(64));

    private NewRequest stalledPrefill(String id, StallingTensorServer producer) {
        CurrentForwardPassInfo info = new CurrentForwardPassInfo(id, CounterModel.PREFILL, false, 0, 0, 1);
        return new NewRequest(id, List.of(conductor.prefill0, conductor.prefill1, conductor.decode), conductor.placement,
                List.of(new GraphEdge(CounterModel.EMBED, CounterModel.TOKENS, List.of(producer.descriptor(99L, "conductor")))),
                info);
    }

    private void heartbeat(Incarnation conductorIncarnation, long intervalMs) {
        w0.loop.deliver(new Received<>(WorkerMessage.of(new ConductorHeartbeat(intervalMs)),
                new ControlHeaders.Stamp(EntityId.CONDUCTOR, conductorIncarnation, 0L, CONFIG)));
    }

    @Test
    void aNewConductorIncarnationDropsWhatTheOldOneDrove() throws Exception {
        Incarnation first = Incarnation.random();
        heartbeat(first, 60_000);
        try (StallingTensorServer producer = new StallingTensorServer(new int[] {3, 4})) {
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(stalledPrefill("r-orphan", producer)));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().readsInFlight() == 1);

            heartbeat(first, 60_000);
            await().during(Duration.ofMillis(300)).atMost(TIMEOUT).until(() -> w0.snapshot().requests() == 1);

            heartbeat(Incarnation.random(), 60_000);
            await().atMost(TIMEOUT).until(() -> w0.snapshot().requests() == 0);
            producer.release();
            await().atMost(TIMEOUT).until(() -> w0.data.parts().reader().inFlightReads(Transport.HTTP) == 0);
        }
        assertThat(w0.snapshot().tombstones()).isGreaterThanOrEqualTo(1);
        assertThat(ended("conductor_lost")).isEqualTo(1.0);
    }

    @Test
    void aConductorSilentForThreeHeartbeatIntervalsLosesItsRequestsHere() throws Exception {
        heartbeat(Incarnation.random(), 100);
        try (StallingTensorServer producer = new StallingTensorServer(new int[] {3, 4})) {
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(stalledPrefill("r-silent", producer)));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().readsInFlight() == 1 || w0.snapshot().requests() == 0);

            // 3 × 100 ms without a stamped record from the conductor.
            await().atMost(TIMEOUT).until(() -> w0.snapshot().requests() == 0);
            producer.release();
            await().atMost(TIMEOUT).until(() -> w0.data.parts().reader().inFlightReads(Transport.HTTP) == 0);
        }
        assertThat(ended("conductor_lost")).isEqualTo(1.0);
    }

    @Test
    void heartbeatsOfTheSameConductorKeepItsRequests() throws Exception {
        Incarnation conductorIncarnation = Incarnation.random();
        heartbeat(conductorIncarnation, 100);
        try (StallingTensorServer producer = new StallingTensorServer(new int[] {3, 4})) {
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(stalledPrefill("r-kept", producer)));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().readsInFlight() == 1);
            long until = System.nanoTime() + Duration.ofMillis(800).toNanos();
            while (System.nanoTime() < until) {
                heartbeat(conductorIncarnation, 100);
                Thread.sleep(50);
                assertThat(w0.snapshot().requests()).isEqualTo(1);
            }
            assertThat(ended("conductor_lost")).isZero();
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new io.mstar.wire.RemoveRequest("r-kept")));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().requests() == 0);
            producer.release();
            await().atMost(TIMEOUT).until(() -> w0.data.parts().reader().inFlightReads(Transport.HTTP) == 0);
        }
    }

    private double ended(String cause) {
        return w0.registry.find(EngineMeters.Definition.REQUESTS_ENDED.declaration().name()).tag("cause", cause).counter()
                .count();
    }
}
