package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.DistributionSummary;
import io.mstar.model.CounterModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.cuda.CounterCudaKernels;
import io.mstar.worker.kernel.cuda.CounterCudaNodeKernels;

/**
 * The counter model across two in-process workers, each on GPU 0 with the CUDA node kernels, gives exactly what
 * {@link CounterAcrossTwoWorkersTests} asserts for the host kernels on host memory (the same {@link CounterScenarios},
 * expected values from {@code CounterModel}'s javadoc); {@link TwoWorkers} then checks every device byte is back.
 * Fails, rather than skips, without a GPU or without the PTX: on the GPU machine either means the run proved nothing.
 */
@Tag("gpu")
class CounterOnCudaGpuTests extends CounterScenarios {

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
        maxTokensFive();
    }

    @Test
    void stopAtEndsTheLoopOnTheGpuFlag() throws Exception {
        stopAtThirdToken();
    }

    @Test
    void anEvenTokenCountEndsWithExactlyOneFinalChunk() throws Exception {
        assertThat(evenTokenCount().failure).isNull();
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
            assertPredicted(conductor.runs.get("r-" + i), inputs.get(i), i % 3 == 0 ? 3 : 6);
        }
        DistributionSummary step = w1.registry.find("mstar.worker.batch.size").tag("node", CounterModel.STEP).summary();
        assertThat(step).isNotNull();
        assertThat(step.max()).as("several requests' steps ran in one GPU batch").isGreaterThan(1);
    }
}
