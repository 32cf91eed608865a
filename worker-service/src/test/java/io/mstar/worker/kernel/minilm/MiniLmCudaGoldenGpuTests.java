package io.mstar.worker.kernel.minilm;

import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.GemmPrecision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * minilm-embed with the real weights on a GPU against ONNX Runtime's embeddings of the fixed sentence set (the golden
 * files, which {@code MiniLmReferenceTests} proves equal a fresh ONNX Runtime run), per sentence, in every
 * precision, to that precision's {@link MiniLmCudaSettings#minCosine}.
 * Reads the ids from the golden file (no tokenizer library on the GPU machine) and the ONNX file from
 * {@code -Dmstar.minilm.onnx=PATH}, else from the langchain4j artifact on the class path.
 */
@Tag("gpu")
class MiniLmCudaGoldenGpuTests {

    @Test
    void cudaEncoderMatchesOnnxRuntimeOnEverySentence() throws Exception {
        assumeTrue(MiniLmCudaKernels.available(), MiniLmCudaKernels.unavailableReason().orElse(""));
        String path = System.getProperty("mstar.minilm.onnx");
        // a deliberate GPU run without the weights is a set-up error, not a reason to skip
        assertThat((path != null && !path.isBlank())
                || MiniLmCudaGoldenGpuTests.class.getClassLoader().getResource(MiniLmWeights.ONNX_RESOURCE) != null)
                .as("no weights: pass -Dmstar.minilm.onnx=/path/to/all-minilm-l6-v2.onnx (JAVA_OPTS of .device/run.sh)")
                .isTrue();
        MiniLmGolden golden = MiniLmGolden.load();
        MiniLmWeights weights = MiniLmWeights.fromSystemPropertyOrClasspath();
        try (CudaDevice device = new CudaDevice(0)) {
            MiniLmCudaKernels kernels = new MiniLmCudaKernels(device);
            long before = device.stats().bytesInUse();
            for (GemmPrecision precision : GemmPrecision.values()) {
                try (MiniLmCudaEncoder encoder = new MiniLmCudaEncoder(kernels, weights,
                        new MiniLmCudaSettings(precision, true))) {
                    int n = golden.ids().size();
                    double worst = 1;
                    int[][] batches = {{0, 1}, {2, 12}, {12, 30}, {30, 47}, {47, n - 1}, {n - 1, n}, {0, n}};
                    for (int[] range : batches) {
                        List<int[]> ids = golden.ids().subList(range[0], range[1]);
                        float[][] out = encoder.encode(ids);
                        for (int i = range[0]; i < range[1]; i++) {
                            double cos = MiniLmGolden.cosine(out[i - range[0]], golden.embeddings()[i]);
                            worst = Math.min(worst, cos);
                            assertThat(cos).as("%s, sentence %d", precision, i)
                                    .isGreaterThanOrEqualTo(MiniLmCudaSettings.minCosine(precision));
                        }
                    }
                    System.out.printf("minilm cuda %s vs ONNX Runtime: worst cosine %.8f (1 - cos = %.2e) over %d "
                            + "sentences%n", precision, worst, 1 - worst, n);
                }
                device.synchronize();
                assertThat(device.stats().bytesInUse()).as("%s", precision).isEqualTo(before);
            }
        }
    }
}
