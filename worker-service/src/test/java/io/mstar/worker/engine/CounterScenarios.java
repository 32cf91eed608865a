package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;

import io.mstar.model.CounterModel;
import io.mstar.wire.WorkerGraphsDone;

/**
 * The counter requests that the host run ({@link CounterAcrossTwoWorkersTests}) and the CUDA run
 * ({@link CounterOnCudaGpuTests}) both make, each checked against what CounterModel's javadoc predicts, so the two
 * backends are held to the same expected values; each test adds what it asserts beyond them. Not tests themselves:
 * the two classes name and tag their own.
 */
abstract class CounterScenarios extends TwoWorkers {

    /** Tokens {1, 2, 3} (s0 = 15), max_tokens 5: five tokens, detok chunks of two, the last detok report final. */
    CounterConductor.Run maxTokensFive() throws Exception {
        int[] tokens = {1, 2, 3};
        int s0 = CounterConductor.s0(tokens);
        CounterConductor.Run run = runToEnd("r-1", tokens, 5, null);
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.PREFILL_OUT)).containsExactly(s0);
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3, s0 + 4, s0 + 5);
        assertThat(run.flat(CounterModel.TEXT)).containsExactly(160, 170, 180, 190, 200);
        assertThat(run.chunkSizes(CounterModel.TEXT)).containsExactly(2, 2, 1);
        WorkerGraphsDone last = lastDetokReport(run);
        assertThat(last.partitionDone()).isTrue();
        assertThat(last.streamTokensConsumed()).containsEntry(CounterModel.TOKEN_STREAM, 5);
        return run;
    }

    /** Tokens {4} (s0 = 9) stopping at s0 + 3 under max_tokens 10: three tokens, the stop reported. */
    WorkerGraphsDone stopAtThirdToken() throws Exception {
        int[] tokens = {4};
        int s0 = CounterConductor.s0(tokens);
        CounterConductor.Run run = runToEnd("r-stop", tokens, 10, s0 + 3);
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3);
        assertThat(run.flat(CounterModel.TEXT)).containsExactly(100, 110, 120);
        assertThat(run.chunkSizes(CounterModel.TEXT)).containsExactly(2, 1);
        WorkerGraphsDone decode = decodeReports(run).get(0);
        assertThat(decode.newTokenCounts()).containsEntry(CounterModel.TOKEN, 3);
        assertThat(decode.persistSignals().get(CounterModel.STOPPED)).as("the stop is reported, not inferred").hasSize(1);
        return decode;
    }

    /**
     * Tokens {0}, max_tokens 4: producer_done may arrive before or after the last full chunk is cut, so that chunk
     * is final or an empty final one follows it.
     */
    CounterConductor.Run evenTokenCount() throws Exception {
        CounterConductor.Run run = runToEnd("r-even", new int[] {0}, 4, null);
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(2, 3, 4, 5);
        assertThat(run.chunkSizes(CounterModel.TEXT)).isIn(List.of(2, 2), List.of(2, 2, 0));
        return run;
    }

    /** A request that made {@code n} tokens from {@code tokens} gave exactly the javadoc's prefill, tokens and text. */
    static void assertPredicted(CounterConductor.Run run, int[] tokens, int n) {
        int s0 = CounterConductor.s0(tokens);
        assertThat(run.failure).as(run.id).isNull();
        assertThat(run.flat(CounterModel.PREFILL_OUT)).as(run.id).containsExactly(s0);
        assertThat(run.flat(CounterModel.TOKEN)).as(run.id).containsExactlyElementsOf(
                IntStream.rangeClosed(1, n).mapToObj(k -> s0 + k).toList());
        assertThat(run.flat(CounterModel.TEXT)).as(run.id).containsExactlyElementsOf(
                IntStream.rangeClosed(1, n).mapToObj(k -> (s0 + k) * 10).toList());
    }

    CounterConductor.Run runToEnd(String id, int[] tokens, int maxTokens, Integer stopAt) throws Exception {
        conductor.start(id, tokens, maxTokens, stopAt);
        conductor.pumpUntilRemoved(TIMEOUT);
        return conductor.runs.get(id);
    }

    List<WorkerGraphsDone> decodeReports(CounterConductor.Run run) {
        return run.reports.stream().filter(r -> r.workerGraphIds().contains(conductor.decode)).toList();
    }

    static WorkerGraphsDone lastDetokReport(CounterConductor.Run run) {
        return run.reports.stream().filter(r -> r.partitionName().equals(CounterModel.DETOK_PARTITION))
                .reduce((a, b) -> b).orElseThrow();
    }
}
