package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.mstar.model.CounterModel;
import io.mstar.wire.WorkerGraphsDone;

/** The counter model end to end across two workers gives exactly what CounterModel's javadoc predicts. */
class CounterAcrossTwoWorkersTests extends CounterScenarios {

    @Test
    void maxTokensBoundsTheDecodeAndDetokEmitsChunksOfTwo() throws Exception {
        CounterConductor.Run run = maxTokensFive();
        // two decode passes: 4 iterations, then the one token left
        List<Integer> perPass = decodeReports(run).stream().map(r -> r.newTokenCounts().get(CounterModel.TOKEN))
                .toList();
        assertThat(perPass).containsExactly(4, 1);
        assertThat(lastDetokReport(run).outputSignalNames()).containsExactly(CounterModel.TEXT);
        // w1 runs count and step: it waits after the prefill report and after the first decode report, not after
        // the last one (no InputSignals follow) nor between detok chunks (a stream, not the conductor, starts those)
        Timer wait = w1.registry.find("mstar.worker.transition.wait").tags("model", CounterModel.NAME,
                "walk", CounterModel.DECODE).timer();
        assertThat(wait).isNotNull();
        assertThat(wait.count()).isEqualTo(2);
        assertThat(wait.totalTime(TimeUnit.NANOSECONDS)).isPositive();
        assertThat(w1.registry.find("mstar.worker.transition.wait").tag("walk", CounterModel.CHUNK).timer()).isNull();
    }

    @Test
    void stopAtEndsTheLoopAfterTheIterationThatHitIt() throws Exception {
        WorkerGraphsDone decode = stopAtThirdToken();
        assertThat(decode.outputLoopIndices().get(CounterModel.TOKEN).loopIndices())
                .containsEntry(CounterModel.DECODE_LOOP, 2);
        assertThat(decode.persistSignals().get(CounterModel.STATE)).hasSize(1);
    }

    @Test
    void aStopOnThePassesLastIterationStillEndsTheRequest() throws Exception {
        int[] tokens = {4};
        int s0 = CounterConductor.s0(tokens);
        CounterConductor.Run run = runToEnd("r-stop-last", tokens, 10, s0 + 4);

        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3, s0 + 4);
        assertThat(decodeReports(run)).hasSize(1);
    }

    /**
     * Chunk boundaries never depend on when producer_done arrives; only whether the last full chunk is itself final
     * (producer_done came before it was cut) or an empty final chunk follows it (came after) does, as in the
     * reference. Either way exactly one pass reports partition_done, the last one.
     */
    @Test
    void anEvenTokenCountEndsWithExactlyOneFinalChunk() throws Exception {
        CounterConductor.Run run = evenTokenCount();
        List<Integer> sizes = run.chunkSizes(CounterModel.TEXT);
        List<WorkerGraphsDone> detok = run.reports.stream()
                .filter(r -> CounterModel.DETOK_PARTITION.equals(r.partitionName())).toList();
        assertThat(detok).hasSize(sizes.size());
        assertThat(detok).extracting(WorkerGraphsDone::partitionDone)
                .containsExactlyElementsOf(IntStream.range(0, sizes.size()).mapToObj(i -> i == sizes.size() - 1).toList());
    }

    @Test
    void concurrentRequestsShareBatchesAndEachGetsItsOwnOutputs() throws Exception {
        List<int[]> inputs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            inputs.add(new int[] {i, i + 1});
            conductor.start("r-" + i, inputs.get(i), 6, null);
        }
        conductor.pumpUntilRemoved(TIMEOUT);

        for (int i = 0; i < inputs.size(); i++) {
            assertPredicted(conductor.runs.get("r-" + i), inputs.get(i), 6);
        }
        DistributionSummary step = w1.registry.find("mstar.worker.batch.size").tag("node", CounterModel.STEP).summary();
        assertThat(step).isNotNull();
        assertThat(step.max()).as("continuous batching put several requests' steps in one batch").isGreaterThan(1);
        assertThat(w1.registry.find("mstar.worker.batches").tag("walk", CounterModel.DECODE).counter().count())
                .isLessThan(12 * 6);
    }
}
