package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/** Stream chunks follow the order the tokens were registered in, not the order their reads landed. */
class StreamChunkOrderTests extends TwoWorkers {

    private static final String ID = "r-stream";

    private InputSignals token(TensorPointerInfo d, CurrentForwardPassInfo info) {
        GraphEdge edge = GraphEdge.builder(CounterModel.DETOK, CounterModel.TOKEN_STREAM).isStreaming(true)
                .targetPartition(CounterModel.DETOK_PARTITION).tensorInfo(List.of(d)).build();
        return new InputSignals(ID, List.of(edge), info, CounterModel.DETOK_PARTITION, null);
    }

    @Test
    void aChunkKeepsRegistrationOrderWhenTheFirstTokenLandsLast() throws Exception {
        CurrentForwardPassInfo info = new CurrentForwardPassInfo(ID, CounterModel.CHUNK, false, 0, 0, 8, null, null,
                null, CounterModel.DETOK_PARTITION, null, null);
        try (StallingTensorServer slow = new StallingTensorServer(new int[] {41})) {
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new NewRequest(ID, List.of(conductor.chunk),
                    conductor.placement, List.of(), info)));
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(token(slow.descriptor(5L, "conductor"), info)));
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(token(data.input(ID, new int[] {42}), info)));
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(token(data.input(ID, new int[] {43}), info)));

            // the second and third tokens land; the first is still on its way, so no chunk may be cut
            await().during(Duration.ofMillis(300)).atMost(TIMEOUT).until(() -> broker.conductor.isEmpty());
            slow.release();

            List<int[]> texts = new ArrayList<>();
            List<WorkerGraphsDone> reports = new ArrayList<>();
            pump(texts, reports, 1);
            assertThat(texts.get(0)).containsExactly(410, 420);
            assertThat(reports.get(0).partitionDone()).isFalse();
            assertThat(reports.get(0).streamTokensConsumed()).containsEntry(CounterModel.TOKEN_STREAM, 2);

            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new InputSignals(ID, List.of(), info,
                    CounterModel.DETOK_PARTITION, Set.of(CounterConductor.DEFAULT))));
            pump(texts, reports, 2);
            assertThat(texts.get(1)).containsExactly(430);
            assertThat(reports.get(1).partitionDone()).isTrue();
            assertThat(reports.get(1).streamTokensConsumed()).containsEntry(CounterModel.TOKEN_STREAM, 3);
            assertThat(texts).hasSize(2);

            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new DrainRequest(ID)));
            await().atMost(TIMEOUT).until(() -> broker.conductor.stream().anyMatch(m -> m.body() instanceof ReadsDone));
            broker.fromConductor(CounterConductor.W0, WorkerMessage.of(new RemoveRequest(ID)));
            data.removeRequest(ID);
            await().atMost(TIMEOUT).until(() -> w0.snapshot().requests() == 0);
        }
    }

    /** Reads emitted texts (acknowledging each) and collects reports until there are {@code reportsWanted}. */
    private void pump(List<int[]> texts, List<WorkerGraphsDone> reports, int reportsWanted) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (reports.size() < reportsWanted) {
            assertThat(System.nanoTime()).as("timed out waiting for a report").isLessThan(deadline);
            ConductorMessage m = broker.conductor.poll(50, TimeUnit.MILLISECONDS);
            if (m == null) {
                continue;
            }
            if (m.body() instanceof ResultTensors result) {
                texts.add(data.outputInts(result));
                TestConductorLoop.acknowledge(broker, result);
            } else if (m.body() instanceof WorkerGraphsDone done) {
                reports.add(done);
            }
        }
    }
}
