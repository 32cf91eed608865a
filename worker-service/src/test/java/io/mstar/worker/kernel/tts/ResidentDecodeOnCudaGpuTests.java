package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.resident.ResidentCudaKernels;

/**
 * Captured toy-tts decode on GPU 0 against eager CUDA, under the same churn as the host test ({@link ResidentChurn}):
 * greedy and sampled tokens identical for the test seeds, the device tables read back after every step equal to the
 * host mirror, and the captures replayed across steps rather than made again. Fails, rather than skips, without a GPU
 * or the PTX.
 */
@Tag("gpu")
class ResidentDecodeOnCudaGpuTests {

    @Test
    void capturedDecodeEqualsEagerCudaAndTheTablesEqualTheMirrorUnderChurn() throws Exception {
        if (!CudaLmBackend.available() || !ResidentCudaKernels.available()) {
            throw new IllegalStateException("this build has no toy-tts or resident PTX (nvcc was not on the PATH)");
        }
        ToyTtsWeights weights = ToyTtsWeights.generate();
        for (long seed : Seeds.withFixed("ResidentDecodeOnCudaGpuTests", 1L, 2L)) {
            try (CudaDevice gpu = new CudaDevice(0)) {
                ResidentChurn.Summary s = new ResidentChurn(gpu, () -> new CudaLmBackend(gpu, weights),
                        () -> new CudaLmBackend(gpu, weights)).run(seed, 3_000);
                assertThat(s.replays()).as("steps replayed").isGreaterThan(1_500);
                assertThat(s.captures()).as("captures reused: two per padded size at most").isBetween(4L, 8L);
                assertThat(s.counts()).containsKeys("offloaded", "reloaded", "finished", "sampling changed");
                assertThat(s.staleRows()).isPositive();
                assertThat(gpu.stats().bytesInUse()).isZero();
            }
        }
    }
}
