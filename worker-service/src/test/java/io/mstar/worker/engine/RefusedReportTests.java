package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WorkerGraphsDone;

/**
 * A pass report the broker refuses fails its request at once: nothing else would tell the conductor the pass ended, and
 * the request would wait for its deadline (a broker restart lost one that way before producers kept their metadata).
 */
class RefusedReportTests extends TwoWorkers {

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
}
