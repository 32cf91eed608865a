package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.DistributionSummary;
import io.mstar.model.CounterModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.cuda.CounterCudaKernels;
import io.mstar.worker.kernel.cuda.CounterCudaNodeKernels;

/**
 * The counter model across two in-process workers, each on GPU 0 with the CUDA node kernels, gives exactly what
 * {@link CounterAcrossTwoWorkersTests} asserts for the host kernels on host memory (the same expected values,
 * from {@code CounterModel}'s javadoc); {@link TwoWorkers} then checks every device byte is back. Fails, rather
 * than skips, without a GPU or without the PTX: on the GPU machine either means the run proved nothing.
 */
@Tag("gpu")
class CounterOnCudaGpuTests extends TwoWorkers {

    @Override
    Device openDevice() {
        return new CudaDevice(0);
    }

    @Override
    KernelCatalog catalogFor(Device device) {
        if (!CounterCudaKernels.available()) {
            throw new IllegalStateException(CounterCudaKernels.unavailableReason().orElseThrow());
        }
        return new KernelCatalog(List.of(CounterCudaNodeKernels.kernels(new CounterCudaKernels((CudaDevice) device))));
    }

    @Test
    void prefillDecodeAndDetokMatchTheHostRun() throws Exception {
        assertThat(w0.data.device().kind()).isEqualTo(DeviceKind.CUDA);
        assertThat(w1.data.device().kind()).isEqualTo(DeviceKind.CUDA);
        int[] tokens = {1, 2, 3};
        int s0 = CounterConductor.s0(tokens);
        conductor.start("r-1", tokens, 5, null);
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-1");
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.PREFILL_OUT)).containsExactly(s0);
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(s0 + 1, s0 + 2, s0 + 3, s0 + 4, s0 + 5);
        assertThat(run.flat(CounterModel.TEXT)).containsExactly(160, 170, 180, 190, 200);
        assertThat(run.chunkSizes(CounterModel.TEXT)).containsExactly(2, 2, 1);
        WorkerGraphsDone last = run.reports.stream().filter(r -> r.partitionName().equals(CounterModel.DETOK_PARTITION))
                .reduce((a, b) -> b).orElseThrow();
        assertThat(last.partitionDone()).isTrue();
        assertThat(last.streamTokensConsumed()).containsEntry(CounterModel.TOKEN_STREAM, 5);
    }

    @Test
    void stopAtEndsTheLoopOnTheGpuFlag() throws Exception {
        int[] tokens = {4};
        int s0 = CounterConductor.s0(tokens);
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
        assertThat(decode.persistSignals().get(CounterModel.STOPPED)).as("the stop is reported").hasSize(1);
    }

    @Test
    void anEvenTokenCountEndsWithExactlyOneFinalChunk() throws Exception {
        conductor.start("r-even", new int[] {0}, 4, null);
        conductor.pumpUntilRemoved(TIMEOUT);

        CounterConductor.Run run = conductor.runs.get("r-even");
        assertThat(run.failure).isNull();
        assertThat(run.flat(CounterModel.TOKEN)).containsExactly(2, 3, 4, 5);
        // producer_done may arrive before or after the last full chunk is cut: that chunk is final, or an empty one follows.
        assertThat(run.chunkSizes(CounterModel.TEXT)).isIn(List.of(2, 2), List.of(2, 2, 0));
    }

    @Test
    void concurrentRequestsWithAndWithoutStopAtEachGetTheirOwnOutputs() throws Exception {
        List<int[]> inputs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            inputs.add(new int[] {i, i + 1, -i});
            int s0 = CounterConductor.s0(inputs.get(i));
            // every third request stops at its third token, inside the same step batches as the others
            conductor.start("r-" + i, inputs.get(i), 6, i % 3 == 0 ? s0 + 3 : null);
        }
        conductor.pumpUntilRemoved(TIMEOUT);

        for (int i = 0; i < inputs.size(); i++) {
            CounterConductor.Run run = conductor.runs.get("r-" + i);
            int s0 = CounterConductor.s0(inputs.get(i));
            int n = i % 3 == 0 ? 3 : 6;
            assertThat(run.failure).as("r-%d", i).isNull();
            assertThat(run.flat(CounterModel.PREFILL_OUT)).as("r-%d", i).containsExactly(s0);
            assertThat(run.flat(CounterModel.TOKEN)).as("r-%d", i).containsExactlyElementsOf(
                    IntStream.rangeClosed(1, n).mapToObj(k -> s0 + k).toList());
            assertThat(run.flat(CounterModel.TEXT)).as("r-%d", i).containsExactlyElementsOf(
                    IntStream.rangeClosed(1, n).mapToObj(k -> (s0 + k) * 10).toList());
        }
        DistributionSummary step = w1.registry.find("mstar.worker.batch.size").tag("node", CounterModel.STEP).summary();
        assertThat(step).isNotNull();
        assertThat(step.max()).as("several requests' steps ran in one GPU batch").isGreaterThan(1);
    }
}
