package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.streaming.FixedChunkPolicy;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/** {@code mstar.worker.device}: which device a worker opens for each setting, and which kernels it then runs. */
class WorkerDevicesTests {

    private final WorkerDataProperties data = new WorkerDataProperties("127.0.0.1", 0, "", Path.of("/dev/shm"),
            DataSize.ofMegabytes(1), 1, DataSize.ofMegabytes(3));
    private final List<Integer> opened = new ArrayList<>();

    /** Stands in for the driver's open only where no GPU exists to open; records the ordinal asked for. */
    private Device cudaStandIn(int ordinal) {
        opened.add(ordinal);
        return new HostDevice("cuda:" + ordinal, 1 << 20);
    }

    @Test
    void autoWithoutAGpuRunsOnHostMemoryOfTheConfiguredSize() {
        try (Device device = WorkerDevices.open(DeviceChoice.AUTO, data, () -> 0, this::cudaStandIn)) {
            assertThat(device).isInstanceOfSatisfying(HostDevice.class,
                    h -> assertThat(h.capacityBytes()).isEqualTo(DataSize.ofMegabytes(3).toBytes()));
            assertThat(device.name()).isEqualTo(HostDevice.NAME);
        }
        assertThat(opened).isEmpty();
    }

    @Test
    void autoOnThisMachinesRealDriverAgreesWithWhatTheDriverSees() {
        try (Device device = WorkerDevices.open(DeviceChoice.AUTO, data)) {
            assertThat(device.kind()).isEqualTo(CudaDevice.deviceCount() > 0 ? DeviceKind.CUDA : DeviceKind.HOST);
        }
    }

    @Test
    void autoWithAGpuOpensGpuZero() {
        try (Device device = WorkerDevices.open(DeviceChoice.AUTO, data, () -> 2, this::cudaStandIn)) {
            assertThat(device.name()).isEqualTo("cuda:0");
        }
        assertThat(opened).containsExactly(0);
    }

    @Test
    void hostNeverAsksTheDriver() {
        try (Device device = WorkerDevices.open(DeviceChoice.HOST, data, () -> {
            throw new AssertionError("host must not probe for GPUs");
        }, this::cudaStandIn)) {
            assertThat(device.name()).isEqualTo(HostDevice.NAME);
        }
        assertThat(opened).isEmpty();
    }

    @Test
    void cudaWithoutAGpuRefusesToStartAndSaysWhy() {
        assertThatThrownBy(() -> WorkerDevices.open(DeviceChoice.CUDA, data, () -> 0, this::cudaStandIn))
                .isInstanceOfSatisfying(EngineException.class,
                        e -> assertThat(e.reason()).isEqualTo(EngineException.Reason.DEVICE_UNAVAILABLE))
                .hasMessageContaining("mstar.worker.device=cuda")
                .hasMessageContaining("no CUDA GPU is visible");
        assertThat(opened).isEmpty();
    }

    @Test
    void cudaWithAGpuOpensIt() {
        try (Device device = WorkerDevices.open(DeviceChoice.CUDA, data, () -> 1, this::cudaStandIn)) {
            assertThat(device.name()).isEqualTo("cuda:0");
        }
    }

    @Test
    void aHostDeviceRunsTheCounterInJava() {
        try (Device device = new HostDevice(HostDevice.NAME, 1 << 20)) {
            ModelKernels kernels = WorkerDevices.counterKernels(device);
            assertThat(kernels.model()).isEqualTo(CounterModel.NAME);
            assertThat(kernels.chunkPolicy(CounterModel.TOKEN_STREAM)).isEqualTo(new FixedChunkPolicy(CounterModel.CHUNK_SIZE));
            Tensor tokens = Int32Tensors.write(device, new int[] {1, 2, 3});
            NodeResult r = kernels.kernel(CounterModel.EMBED).forward(device, List.of(new NodeCall("r", Map.of(
                    CounterModel.TOKENS, tokens), new CurrentForwardPassInfo("r", CounterModel.PREFILL, false, 0, 0, 1),
                    new NestedLoopIndices(List.of(), Map.of(), 0)))).get(0);
            assertThat(Int32Tensors.read(device, r.outputs().get(CounterModel.H))).containsExactly(2, 3, 4);
            device.free(tokens.buffer());
            device.free(r.outputs().get(CounterModel.H).buffer());
            assertThat(device.stats().bytesInUse()).isZero();
        }
    }
}
