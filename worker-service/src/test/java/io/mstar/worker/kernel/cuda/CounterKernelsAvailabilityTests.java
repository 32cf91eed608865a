package io.mstar.worker.kernel.cuda;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the worker can learn without a GPU: whether this build carries the kernels, why not, and that the
 * entry points the Java side launches are the ones the CUDA source (and its PTX, when built) defines.
 */
class CounterKernelsAvailabilityTests {

    private static final Path SOURCE = Path.of("src/main/cuda/counter_kernels.cu");

    @Test
    void aBuildWithoutThePtxSaysNvccWasMissing() {
        assertThat(CounterCudaKernels.unavailableReason("no_such_kernels.ptx"))
                .contains("CUDA kernels unavailable: this build has no PTX (nvcc was not on the PATH)");
    }

    @Test
    void availabilityFollowsThePtxResourceAndGivesAReasonExactlyWhenFalse() {
        boolean ptxPresent = CounterCudaKernels.class.getResource(CounterCudaKernels.PTX_RESOURCE) != null;

        assertThat(CounterCudaKernels.available()).isEqualTo(ptxPresent);
        assertThat(CounterCudaKernels.unavailableReason().isPresent()).isEqualTo(!ptxPresent);
    }

    @Test
    void everyLaunchedKernelIsDefinedInTheSourceAndInThePtxWhenBuilt() throws IOException {
        String source = Files.readString(SOURCE);
        String ptx = CounterCudaKernels.ptx(CounterCudaKernels.PTX_RESOURCE);

        for (String kernel : CounterCudaKernels.KERNELS) {
            assertThat(source).contains("extern \"C\" __global__ void " + kernel + "(");
            if (ptx != null) {
                assertThat(ptx).as("PTX entry %s", kernel).contains(".visible .entry " + kernel + "(");
            }
        }
    }

    @Test
    void theGridCoversSmallCountsWithOneBlockEachAndCapsLargeOnes() {
        int block = CounterCudaKernels.BLOCK;

        assertThat(CounterCudaKernels.grid(0)).isEqualTo(1);
        assertThat(CounterCudaKernels.grid(1)).isEqualTo(1);
        assertThat(CounterCudaKernels.grid(block)).isEqualTo(1);
        assertThat(CounterCudaKernels.grid(block + 1)).isEqualTo(2);
        assertThat(CounterCudaKernels.grid(1L << 40)).isEqualTo(CounterCudaKernels.MAX_GRID);
        assertThat(block % 32).as("warp shuffles need whole warps").isZero();
    }
}
