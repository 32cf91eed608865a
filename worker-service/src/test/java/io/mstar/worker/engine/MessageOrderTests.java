package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerMessage;

/** Kafka orders one sender's records only: early messages are parked, late ones dropped, duplicates harmless. */
class MessageOrderTests extends TwoWorkers {

    @Test
    void peerSignalsThatOvertakeTheNewRequestAreParkedAndReplayed() throws Exception {
        broker.hold(s -> s.to().equals(CounterConductor.W1.value()) && s.from().equals(EntityId.CONDUCTOR.value())
                && ((WorkerMessage) s.message()).body() instanceof NewRequest);
        conductor.start("r-early", new int[] {5, 6}, 3, null);
        await().atMost(TIMEOUT).until(() -> w1.snapshot().parkedMessages() == 2); // h and base from worker 0
        assertThat(w1.snapshot().requests()).isZero();

        broker.release();
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-early");
        int s0 = CounterConductor.s0(new int[] {5, 6});
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3);
        assertThat(run.flat(CounterModel.TEXT)).containsExactly((s0 + 1) * 10, (s0 + 2) * 10, (s0 + 3) * 10);
        assertThat(w1.snapshot().parkedMessages()).isZero();
    }

    @Test
    void duplicateNewRequestsAndTeardownMessagesChangeNothing() throws Exception {
        var newRequests = conductor.newRequests("r-dup", new int[] {2}, 2, null);
        newRequests.forEach(e -> broker.fromConductor(e.getKey(), e.getValue()));
        newRequests.forEach(e -> broker.fromConductor(e.getKey(), e.getValue())); // delivered twice
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-dup");
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(6, 7);
        assertThat(run.flat(CounterModel.PREFILL_OUT)).containsExactly(5);
        // the duplicate inputs were read too: their reads are acknowledged nowhere (the conductor's own) and
        // their copies were freed with the request, which the leak check after this test confirms

        // late and repeated teardown
        for (EntityId w : List.of(CounterConductor.W0, CounterConductor.W1)) {
            broker.fromConductor(w, WorkerMessage.of(new DrainRequest("r-dup")));
            broker.fromConductor(w, WorkerMessage.of(new RemoveRequest("r-dup")));
            broker.fromConductor(w, WorkerMessage.of(new UnpersistTensors("r-dup", Map.of(12345L, 1))));
            broker.fromConductor(w, WorkerMessage.of(new TensorReceived("r-dup", Map.of(12345L, 1), List.of())));
        }
        assertThat(w0.snapshot().requests()).isZero();
        assertThat(w1.snapshot().requests()).isZero();
        assertThat(w0.snapshot().tombstones()).isEqualTo(1);
        assertThat(w0.snapshot().parkedMessages()).as("late messages are dropped, not parked").isZero();
    }

    @Test
    void aLateTensorEdgeForARemovedRequestIsAcknowledgedUnread() throws Exception {
        conductor.start("r-late", new int[] {1}, 1, null);
        conductor.pumpUntilRemoved(TIMEOUT);
        int acksBefore = broker.sentTo(CounterConductor.W1.value(), TensorReceived.class).size();

        TensorPointerInfo ghost = new TensorPointerInfo(777L, List.of(1L), List.of(1L), "int32", 4, 0,
                "127.0.0.1:1", CounterConductor.W1.value());
        CurrentForwardPassInfo info = new CurrentForwardPassInfo("r-late", CounterModel.PREFILL, false, 0, 0, 1);
        broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new InputSignals("r-late",
                List.of(new GraphEdge(CounterModel.EMBED, CounterModel.TOKENS, List.of(ghost))), info)));

        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<TensorReceived> acks = broker.sentTo(CounterConductor.W1.value(), TensorReceived.class);
            assertThat(acks).hasSize(acksBefore + 1);
            assertThat(acks.get(acks.size() - 1).successfulTensors()).containsEntry(777L, 1);
        });
        assertThat(w0.snapshot().parkedMessages()).isZero();
    }
}
