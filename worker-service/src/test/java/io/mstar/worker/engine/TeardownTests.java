package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphEdge;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.transport.Transport;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.WorkerMessage;

/** Drain waits for reads in flight; remove frees everything even while bytes are still on the way. */
class TeardownTests extends TwoWorkers {

    private NewRequest stalledPrefill(String id, StallingTensorServer producer) {
        CurrentForwardPassInfo info = new CurrentForwardPassInfo(id, CounterModel.PREFILL, false, 0, 0, 1);
        return new NewRequest(id, List.of(conductor.prefill0, conductor.prefill1, conductor.decode), conductor.placement,
                List.of(new GraphEdge(CounterModel.EMBED, CounterModel.TOKENS, List.of(producer.descriptor(99L, "conductor")))),
                info);
    }

    private long readsDoneFrom(String id) {
        return broker.sent.stream().filter(s -> s.message() instanceof io.mstar.wire.ConductorMessage m
                && m.body() instanceof ReadsDone r && r.requestId().equals(id)).count();
    }

    @Test
    void drainSendsReadsDoneOnlyAfterTheReadInFlightLanded() throws Exception {
        try (StallingTensorServer producer = new StallingTensorServer(new int[] {3, 4})) {
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(stalledPrefill("r-drain", producer)));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().readsInFlight() == 1);

            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new DrainRequest("r-drain")));
            await().during(Duration.ofMillis(300)).atMost(TIMEOUT).until(() -> readsDoneFrom("r-drain") == 0);

            producer.release();
            await().atMost(TIMEOUT).until(() -> readsDoneFrom("r-drain") == 1);
            assertThat(w0.snapshot().tensors().liveTensors()).as("a draining worker does not ingest what landed").isZero();
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new RemoveRequest("r-drain")));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().requests() == 0);
            assertThat(broker.conductor.stream().noneMatch(m -> m.body() instanceof io.mstar.wire.WorkerGraphsDone)).isTrue();
        }
    }

    @Test
    void removeWhileTheReadIsInFlightFreesEverythingAndDropsTheLateBytes() throws Exception {
        try (StallingTensorServer producer = new StallingTensorServer(new int[] {3, 4})) {
            conductor.start("r-ok", new int[] {1}, 2, null); // a neighbour that must not notice
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(stalledPrefill("r-gone", producer)));
            await().atMost(TIMEOUT).until(() -> w0.snapshot().readsInFlight() >= 1);

            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new RemoveRequest("r-gone")));
            conductor.pumpUntilRemoved(TIMEOUT);
            producer.release();
            await().atMost(TIMEOUT).until(() -> w0.data.parts().reader().inFlightReads(Transport.HTTP) == 0);
            assertThat(w0.snapshot().requests()).isZero();

            assertThat(conductor.runs.get("r-ok").flat(CounterModel.TOKEN)).containsExactly(4, 5);
            assertThat(w0.snapshot().tombstones()).isGreaterThanOrEqualTo(1);
        }
    }
}
