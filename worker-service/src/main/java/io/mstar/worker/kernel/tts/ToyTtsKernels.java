package io.mstar.worker.kernel.tts;

import java.util.Map;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kernel.tts.cuda.CudaTensorParallelLmBackend;
import io.mstar.worker.resident.ResidentCudaKernels;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.streaming.SlidingWindowChunkPolicy;

/**
 * The toy-tts model's kernels: {@code lm} over a {@link LmBackend} and the {@code codec}, whose input stream is cut
 * in sliding windows of {@value ToyTtsModel#CODEC_WINDOW} tokens advancing by {@value ToyTtsModel#CODEC_STRIDE}.
 */
public final class ToyTtsKernels {

    private static final Logger log = LoggerFactory.getLogger(ToyTtsKernels.class);

    private ToyTtsKernels() {
    }

    /**
     * The kernels for a worker's device: {@code lm} on CUDA on a {@link CudaDevice} when this build carries the PTX,
     * else in Java (on a GPU through host copies: correct, slow). Nothing is built or uploaded until a worker runs
     * {@code lm} for the first time, so a worker the deployment gives no toy-tts node holds no weights.
     */
    public static ModelKernels forDevice(Device device) {
        return forDevice(device, ResidentSettings.of(ResidentMode.OFF), null);
    }

    /**
     * As {@link #forDevice(Device)}, with decode steps on resident tables as {@code resident} says
     * (docs/resident-planning.md); on CUDA only when this build has the resident kernels' PTX too.
     */
    public static ModelKernels forDevice(Device device, ResidentSettings resident, MeterRegistry registry) {
        if (device instanceof CudaDevice cuda) {
            if (CudaLmBackend.available()) {
                log.info("kernels: toy-tts lm on CUDA ({}) when first used", cuda.name());
                ResidentSettings settings = resident;
                if (resident.mode().enabled(device.kind()) && !ResidentCudaKernels.available()) {
                    log.warn("resident planning off on {}: this build has no resident kernels' PTX", cuda.name());
                    settings = ResidentSettings.of(ResidentMode.OFF);
                }
                return with(() -> new CudaLmBackend(cuda, ToyTtsWeights.generate()), settings, registry);
            }
            log.warn("{}; toy-tts runs host kernels on {}", CudaLmBackend.unavailableReason().orElse(
                    "toy-tts CUDA kernels unavailable"), cuda.name());
        }
        return host(resident, registry);
    }

    /**
     * One rank of a tensor-parallel group (docs/toy-tts.md#tensor-parallelism): {@code lm} keeps this rank's shard and
     * meets its peers in {@code group}, on CUDA on a {@link CudaDevice} when this build carries the PTX, else in Java
     * (on a GPU through host copies); the codec as everywhere. The collective is closed with the kernel.
     */
    public static ModelKernels tensorParallel(Device device, Collective group) {
        if (device instanceof CudaDevice cuda && CudaTensorParallelLmBackend.available()) {
            log.info("kernels: toy-tts lm as rank {} of {} on CUDA ({}) when first used", group.rank(), group.size(),
                    cuda.name());
            return withLm(new ToyTtsLmKernel(() -> CudaTensorParallelLmBackend.rank(cuda, ToyTtsWeights.generate(),
                    group), group));
        }
        if (device instanceof CudaDevice) {
            log.warn("{}; the toy-tts lm's rank {} runs host kernels on {}", CudaTensorParallelLmBackend
                    .unavailableReason().orElse("no tensor-parallel CUDA kernels"), group.rank(), device.name());
        }
        log.info("kernels: toy-tts lm as rank {} of {} on {} when first used", group.rank(), group.size(), device.name());
        return withLm(new ToyTtsLmKernel(() -> new TensorParallelLmBackend(ToyTtsWeights.generate(), group, device),
                group));
    }

    /** Everything in plain Java: runs on any device through its copies. */
    public static ModelKernels host() {
        return host(ResidentSettings.of(ResidentMode.OFF), null);
    }

    /** Everything in plain Java, decode steps on host resident tables when {@code resident} is on for hosts. */
    public static ModelKernels host(ResidentSettings resident, MeterRegistry registry) {
        return with(() -> new HostLmBackend(ToyTtsWeights.generate()), resident, registry);
    }

    /** {@code lm} on the backend {@code backend} makes at first use; the codec in Java. */
    public static ModelKernels with(Supplier<LmBackend> backend) {
        return with(backend, ResidentSettings.of(ResidentMode.OFF), null);
    }

    public static ModelKernels with(Supplier<LmBackend> backend, ResidentSettings resident, MeterRegistry registry) {
        return withLm(new ToyTtsLmKernel(backend, resident, registry));
    }

    /** The model's kernels around {@code lm}: the codec in Java, and its stream's sliding window. */
    private static ModelKernels withLm(ToyTtsLmKernel lm) {
        return new ModelKernels(ToyTtsModel.NAME, Map.of(ToyTtsModel.LM, lm, ToyTtsModel.CODEC, new ToyTtsCodecKernel()),
                Map.of(ToyTtsModel.NEW_TOKEN, new SlidingWindowChunkPolicy(ToyTtsModel.CODEC_WINDOW,
                        ToyTtsModel.CODEC_STRIDE)));
    }
}
