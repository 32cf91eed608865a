package io.mstar.worker.tp;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Tensor-parallel settings of a worker ({@code mstar.worker.tensor-parallel.*}; docs/tensor-parallelism.md#gpu-ranks).
 * Every rank of a group must use the same.
 *
 * @param gpuCollective what GPU ranks meet in: {@code nccl} (the default, {@code auto}): NCCL, one GPU per rank, the
 *                      unique id handed over by rank 0 on the control plane; {@code shared-memory}: the host's shared
 *                      memory, each call staged through the host, for ranks of one machine that share a GPU (NCCL
 *                      refuses two ranks on one GPU) or have no NCCL. Host ranks always meet in shared memory
 */
@ConfigurationProperties("mstar.worker.tensor-parallel")
public record TensorParallelProperties(@DefaultValue("auto") GpuCollective gpuCollective) {

    /** {@code mstar.worker.tensor-parallel.gpu-collective}. */
    public enum GpuCollective {
        AUTO, NCCL, SHARED_MEMORY;

        /** Whether GPU ranks use NCCL. */
        public boolean nccl() {
            return this != SHARED_MEMORY;
        }
    }

    public TensorParallelProperties {
        if (gpuCollective == null) {
            gpuCollective = GpuCollective.AUTO;
        }
    }

    public static TensorParallelProperties defaults() {
        return new TensorParallelProperties(GpuCollective.AUTO);
    }
}
