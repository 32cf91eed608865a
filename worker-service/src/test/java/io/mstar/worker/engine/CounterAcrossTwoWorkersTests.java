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
class CounterAcrossTwoWorkersTests extends TwoWorkers {

    @Test
    void maxTokensBoundsTheDecodeAndDetokEmitsChunksOfTwo() throws Exception {
        int[] tokens = {1, 2, 3};
        int s0 = CounterConductor.s0(tokens); // 15
        conductor.start("r-1", tokens, 5, null);
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-1");
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.PREFILL_OUT)).containsExactly(s0);
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3, s0 + 4, s0 + 5);
        assertThat(run.flat(CounterModel.TEXT)).containsExactly(160, 170, 180, 190, 200);
        assertThat(run.chunkSizes(CounterModel.TEXT)).containsExactly(2, 2, 1);
        // two decode passes: 4 iterations, then the one token left
        List<Integer> perPass = run.reports.stream().filter(r -> r.workerGraphIds().contains(conductor.decode))
                .map(r -> r.newTokenCounts().get(CounterModel.TOKEN)).toList();
        assertThat(perPass).containsExactly(4, 1);
        WorkerGraphsDone last = run.reports.stream().filter(r -> r.partitionName().equals(CounterModel.DETOK_PARTITION))
                .reduce((a, b) -> b).orElseThrow();
        assertThat(last.partitionDone()).isTrue();
        assertThat(last.streamTokensConsumed()).containsEntry(CounterModel.TOKEN_STREAM, 5);
        assertThat(last.outputSignalNames()).containsExactly(CounterModel.TEXT);
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
        int[] tokens = {4};
        int s0 = CounterConductor.s0(tokens); // 9
        conductor.start("r-stop", tokens, 10, s0 + 3);
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-stop");
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3);
        assertThat(run.flat(CounterModel.TEXT)).containsExactly(100, 110, 120);
        assertThat(run.chunkSizes(CounterModel.TEXT)).containsExactly(2, 1);
        WorkerGraphsDone decode = run.reports.stream().filter(r -> r.workerGraphIds().contains(conductor.decode))
                .findFirst().orElseThrow();
        assertThat(decode.newTokenCounts()).containsEntry(CounterModel.TOKEN, 3);
        assertThat(decode.outputLoopIndices().get(CounterModel.TOKEN).loopIndices())
                .containsEntry(CounterModel.DECODE_LOOP, 2);
        assertThat(decode.persistSignals().get(CounterModel.STATE)).hasSize(1);
        assertThat(decode.persistSignals().get(CounterModel.STOPPED)).as("the stop is reported, not inferred").hasSize(1);
    }

    @Test
    void aStopOnThePassesLastIterationStillEndsTheRequest() throws Exception {
        int[] tokens = {4};
        int s0 = CounterConductor.s0(tokens);
        conductor.start("r-stop-last", tokens, 10, s0 + 4);
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-stop-last");
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3, s0 + 4);
        assertThat(run.reports.stream().filter(r -> r.workerGraphIds().contains(conductor.decode))).hasSize(1);
    }

    /**
     * Chunk boundaries never depend on when producer_done arrives; only whether the last full chunk is itself final
     * (producer_done came before it was cut) or an empty final chunk follows it (came after) does, as in the
     * reference. Either way exactly one pass reports partition_done, the last one.
     */
    @Test
    void anEvenTokenCountEndsWithExactlyOneFinalChunk() throws Exception {
        conductor.start("r-even", new int[] {0}, 4, null);
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-even");
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(2, 3, 4, 5);
        List<Integer> sizes = run.chunkSizes(CounterModel.TEXT);
        assertThat(sizes).isIn(List.of(2, 2), List.of(2, 2, 0));
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
            CounterConductor.Run run = conductor.runs.get("r-" + i);
            int s0 = CounterConductor.s0(inputs.get(i));
            assertThat(run.failure).isNull();
            assertThat(run.flat(CounterModel.PREFILL_OUT)).containsExactly(s0);
            assertThat(run.flat(CounterModel.TOKEN)).containsExactlyElementsOf(
                    IntStream.rangeClosed(1, 6).mapToObj(k -> s0 + k).toList());
            assertThat(run.flat(CounterModel.TEXT)).containsExactlyElementsOf(
                    IntStream.rangeClosed(1, 6).mapToObj(k -> (s0 + k) * 10).toList());
        }
        DistributionSummary step = w1.registry.find("mstar.worker.batch.size").tag("node", CounterModel.STEP).summary();
        assertThat(step).isNotNull();
        assertThat(step.max()).as("continuous batching put several requests' steps in one batch").isGreaterThan(1);
        assertThat(w1.registry.find("mstar.worker.batches").tag("walk", CounterModel.DECODE).counter().count())
                .isLessThan(12 * 6);
    }
}
