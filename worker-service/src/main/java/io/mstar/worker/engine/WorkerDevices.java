package io.mstar.worker.engine;

import java.util.Locale;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;
import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.counter.CounterHostKernels;
import io.mstar.worker.kernel.cuda.CounterCudaKernels;
import io.mstar.worker.kernel.cuda.CounterCudaNodeKernels;
import io.mstar.worker.kernel.minilm.MiniLmCudaKernels;
import io.mstar.worker.kernel.minilm.MiniLmCudaSettings;
import io.mstar.worker.kernel.minilm.MiniLmKernels;

/**
 * Picks the worker's device from {@code mstar.worker.device} and the kernels that run on it. A worker drives one
 * GPU, ordinal 0 of what it sees (one GPU per pod, or {@code CUDA_VISIBLE_DEVICES} outside Kubernetes).
 */
public final class WorkerDevices {

    private static final Logger log = LoggerFactory.getLogger(WorkerDevices.class);

    private WorkerDevices() {
    }

    /** The device for {@code choice}, with the real driver. */
    public static Device open(DeviceChoice choice, WorkerDataProperties data) {
        return open(choice, data, CudaDevice::deviceCount, CudaDevice::new);
    }

    /**
     * The device for {@code choice}: {@code gpus} says how many GPUs the driver sees (0 without a driver),
     * {@code cuda} opens one by ordinal.
     *
     * @throws EngineException DEVICE_UNAVAILABLE for {@code cuda} without a GPU
     */
    public static Device open(DeviceChoice choice, WorkerDataProperties data, IntSupplier gpus, IntFunction<Device> cuda) {
        int seen = choice == DeviceChoice.HOST ? 0 : gpus.getAsInt();
        if (choice == DeviceChoice.CUDA && seen == 0) {
            throw new EngineException(EngineException.Reason.DEVICE_UNAVAILABLE,
                    "mstar.worker.device=cuda, but no CUDA GPU is visible (no NVIDIA driver, or no GPU); "
                            + "use mstar.worker.device=auto or host to run on host memory");
        }
        Device device = seen > 0 ? cuda.apply(0) : WorkerDataPlane.hostDevice(data);
        log.info("device: {} (mstar.worker.device={}, CUDA GPUs visible: {})", device.name(),
                choice.name().toLowerCase(Locale.ROOT), seen);
        return device;
    }

    /**
     * The counter model's kernels for {@code device}: the CUDA kernels on a {@link CudaDevice} when this build
     * carries their PTX, else the host kernels (on a GPU they copy through host memory, correct but slow).
     */
    public static ModelKernels counterKernels(Device device) {
        if (device instanceof CudaDevice cuda) {
            if (CounterCudaKernels.available()) {
                log.info("kernels: counter on CUDA ({})", cuda.name());
                return CounterCudaNodeKernels.kernels(new CounterCudaKernels(cuda));
            }
            log.warn("{}; running host kernels on {}", CounterCudaKernels.unavailableReason().orElse(
                    "CUDA kernels unavailable"), cuda.name());
            return CounterHostKernels.kernels();
        }
        log.info("kernels: counter in Java on {}", device.name());
        return CounterHostKernels.kernels();
    }

    /**
     * minilm-embed's kernels when {@code config} places one of its nodes on worker {@code self}, else empty (its
     * 90 MB of weights and the tokenizer are not loaded on workers that never run it).
     */
    public static Optional<ModelKernels> miniLmKernels(Device device, DeploymentConfig config, EntityId self,
            MiniLmCudaSettings cudaSettings) {
        boolean placed = config.models().stream()
                .filter(m -> m.name().equals(MiniLmModel.NAME))
                .flatMap(m -> m.nodeGroups().stream())
                .anyMatch(g -> g.workers().contains(self.workerOrdinal()));
        if (!placed) {
            return Optional.empty();
        }
        ModelKernels kernels = MiniLmKernels.of(MiniLmKernels.load(device, cudaSettings));
        boolean cuda = device instanceof CudaDevice && MiniLmCudaKernels.available();
        log.info("kernels: {} {} on {}; weights and tokenizer loading in the background", MiniLmModel.NAME,
                cuda ? "on CUDA (" + cudaSettings + ")" : "on the host", device.name());
        if (device instanceof CudaDevice && !cuda) {
            log.warn("{}; running the host encoder on {}", MiniLmCudaKernels.unavailableReason().orElse(""),
                    device.name());
        }
        return Optional.of(kernels);
    }
}
