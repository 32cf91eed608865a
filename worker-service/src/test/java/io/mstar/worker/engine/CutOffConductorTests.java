package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.mstar.wire.ConductorMessage;
import io.mstar.wire.InputSignals;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/**
 * What a worker does when its conductor might not hear from it: a pass report the broker refuses fails its request at
 * once, and requests it drops because the conductor went silent are reported as failed. Otherwise nothing would tell a
 * conductor that was only cut off (a broker restart), and those requests would wait for their deadlines.
 */
class CutOffConductorTests extends TwoWorkers {

    @Test
    void aRefusedReportFailsItsRequestAndEverythingIsFreed() throws Exception {
        AtomicBoolean refusedOne = new AtomicBoolean();
        broker.refuse(s -> s.message() instanceof ConductorMessage m && m.body() instanceof WorkerGraphsDone
                && refusedOne.compareAndSet(false, true));

        conductor.start("refused-1", new int[] {1, 1}, 3, null);
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(refusedOne).isTrue();
        assertThat(KernelFailureTests.failedIds(broker)).containsExactly("refused-1");
        assertThat(conductor.runs.get("refused-1").failure).contains("not acknowledged by the broker");
    }

    @Test
    void requestsDroppedForASilentConductorAreReportedToIt() throws Exception {
        // Holds w1's decode signals so the request is still in flight when w0 gives up on its conductor.
        broker.hold(s -> s.to().equals(CounterConductor.W1.value()) && s.message() instanceof WorkerMessage m
                && m.body() instanceof InputSignals);
        conductor.start("orphan-1", new int[] {1, 1}, 3, null);
        conductor.pumpUntil(() -> broker.heldCount() > 0, TIMEOUT);

        int dropped = w0.loop.ask(state -> state.engine().dropOrphans("the conductor was silent for PT6S"))
                .block(TIMEOUT);
        broker.release();
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(dropped).isEqualTo(1);
        assertThat(KernelFailureTests.failedIds(broker)).containsExactly("orphan-1");
        assertThat(conductor.runs.get("orphan-1").failure).isEqualTo("worker-0 dropped the request: the conductor was silent for PT6S");
    }
}
