package io.mstar.worker.kernel.minilm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceMemoryStats;
import io.mstar.tensor.device.cuda.CudaBlas;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.GemmPrecision;
import io.mstar.testing.Seeds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Each minilm CUDA kernel against its Java twin in {@link MiniLmHostKernels} on seeded random operands (shapes that
 * are and are not multiples of the tiles), then the whole encoder with random weights: no real weights needed.
 * Tolerances: exact sums to 1e-6, the GEMM to 1e-5 of the sum of |terms| (float accumulation in another order),
 * LayerNorm / attention / pooling to 1e-4 absolute, whole encoder to cosine 0.9999 per sentence.
 */
@Tag("gpu")
class MiniLmCudaKernelsGpuTests {

    private static final long SEED = Seeds.of("MiniLmCudaKernelsGpuTests");

    private static CudaDevice device;
    private static MiniLmCudaKernels kernels;
    private final List<DeviceBuffer> buffers = new ArrayList<>();
    private DeviceMemoryStats baseline;
    private SplittableRandom rnd;

    @BeforeAll
    static void open() {
        assumeTrue(MiniLmCudaKernels.available(), MiniLmCudaKernels.unavailableReason().orElse(""));
        device = new CudaDevice(0);
        kernels = new MiniLmCudaKernels(device);
    }

    @AfterAll
    static void close() {
        if (device != null) {
            device.close();
        }
    }

    @BeforeEach
    void baseline() {
        baseline = device.stats();
        rnd = new SplittableRandom(SEED);
    }

    @AfterEach
    void everyBufferIsFreed() {
        for (DeviceBuffer b : buffers) {
            device.free(b);
        }
        device.synchronize();
        assertThat(device.stats().bytesInUse()).isEqualTo(baseline.bytesInUse());
        assertThat(device.stats().liveBuffers()).isEqualTo(baseline.liveBuffers());
        assertThat(device.isHealthy()).isTrue();
    }

    @Test
    void embeddingsSumWordPositionAndTokenType() {
        int vocab = 1000, hidden = 384, batch = 3, length = 17, rows = batch * length;
        float[] word = random(vocab * hidden, 1), pos = random(length * hidden, 1), type = random(hidden, 1);
        int[] ids = new int[rows];
        for (int i = 0; i < rows; i++) {
            ids[i] = rnd.nextInt(vocab);
        }
        float[] expected = new float[rows * hidden];
        MiniLmHostKernels.embeddings(ids, rows, length, hidden, word, pos, type, expected);
        DeviceBuffer out = alloc(rows * hidden);
        kernels.embeddings(upload(ids), rows, length, hidden, upload(word), upload(pos), upload(type), out);
        assertClose(download(out, rows * hidden), expected, 1e-6);
    }

    /** A linear layer on the device: {@code out = a w + bias}, GELU when asked. */
    private interface Linear {
        void run(DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer out, int m, int n, int k, boolean gelu);
    }

    @Test
    void gemmWithBiasAndGeluMatchesJava() {
        linearMatchesJava((a, w, bias, out, m, n, k, gelu) -> kernels.gemm(a, w, bias, out, m, n, k, gelu));
    }

    @Test
    void linearOnCublasMatchesJava() {
        assertThat(kernels.usesCublas()).as(CudaBlas.unavailableReason().orElse("cuBLAS loads")).isTrue();
        linearMatchesJava((a, w, bias, out, m, n, k, gelu) -> kernels.linear(GemmPrecision.FP32, a, w, bias, out, m, n,
                k, gelu, null));
    }

    @Test
    void encoderGraphsAreCapturedOncePerShapeAndMatchTheEagerEncoder() {
        MiniLmConfig config = new MiniLmConfig(500, 384, 2, 12, 1536, 300, 1e-12f);
        MiniLmWeights weights = MiniLmWeights.random(config, SEED);
        List<int[]> small = sentences(config, 2, 9, 17);
        List<int[]> large = sentences(config, 2, 9, 64, 3, 256, 17);
        try (MiniLmCudaEncoder eager = new MiniLmCudaEncoder(kernels, weights,
                new MiniLmCudaSettings(GemmPrecision.FP32, false));
                MiniLmCudaEncoder graphed = new MiniLmCudaEncoder(kernels, weights, MiniLmCudaSettings.defaults())) {
            for (List<int[]> batch : List.of(small, small, large, small)) {
                float[][] want = eager.encode(batch);
                float[][] got = graphed.encode(batch);
                for (int i = 0; i < batch.size(); i++) {
                    assertThat(MiniLmGolden.cosine(got[i], want[i])).as("sentence %d of %d", i, batch.size())
                            .isGreaterThanOrEqualTo(0.99999);
                }
            }
            // small (4 x 32) twice, then large (8 x 256) grew the buffers and dropped the first graph, then small again
            assertThat(graphed.graphsCaptured()).isEqualTo(2);
            assertThat(graphed.graphLaunches()).isEqualTo(2);
            assertThat(eager.graphsCaptured()).isZero();
        }
    }

    @Test
    void lowerPrecisionEncodersStayCloseToFp32() {
        MiniLmConfig config = new MiniLmConfig(500, 384, 2, 12, 1536, 300, 1e-12f);
        MiniLmWeights weights = MiniLmWeights.random(config, SEED);
        List<int[]> batch = sentences(config, 2, 9, 64, 3, 128, 17);
        float[][] want = new MiniLmHostEncoder(weights).encode(batch);
        for (GemmPrecision p : new GemmPrecision[] {GemmPrecision.TF32, GemmPrecision.BF16}) {
            try (MiniLmCudaEncoder encoder = new MiniLmCudaEncoder(kernels, weights, new MiniLmCudaSettings(p, true))) {
                float[][] got = encoder.encode(batch);
                double worst = 1;
                for (int i = 0; i < batch.size(); i++) {
                    worst = Math.min(worst, MiniLmGolden.cosine(got[i], want[i]));
                }
                System.out.printf("random-weights encoder in %s: worst cosine to the Java encoder %.8f%n", p, worst);
                assertThat(worst).as("%s", p).isGreaterThanOrEqualTo(MiniLmCudaSettings.minCosine(p));
            }
        }
    }

    private List<int[]> sentences(MiniLmConfig config, int... lengths) {
        List<int[]> sentences = new ArrayList<>();
        for (int len : lengths) {
            int[] ids = new int[len];
            ids[0] = 101 % config.vocab();
            for (int i = 1; i < len; i++) {
                ids[i] = rnd.nextInt(config.vocab());
            }
            sentences.add(ids);
        }
        return sentences;
    }

    private void linearMatchesJava(Linear linear) {
        int[][] shapes = {{1, 1, 1}, {37, 70, 19}, {128, 64, 16}, {130, 384, 384}, {256, 1152, 384}, {200, 384, 1536}};
        for (int[] s : shapes) {
            int m = s[0], n = s[1], k = s[2];
            for (boolean gelu : new boolean[] {false, true}) {
                float[] a = random(m * k, 1), w = random(k * n, 1 / Math.sqrt(k)), bias = random(n, 0.5);
                float[] expected = new float[m * n];
                MiniLmHostKernels.gemm(a, w, bias, expected, m, n, k, gelu);
                DeviceBuffer out = alloc(m * n);
                linear.run(upload(a), upload(w), upload(bias), out, m, n, k, gelu);
                float[] got = download(out, m * n);
                for (int r = 0; r < m; r++) {
                    for (int c = 0; c < n; c++) {
                        double scale = Math.abs(bias[c]);
                        for (int kk = 0; kk < k; kk++) {
                            scale += Math.abs(a[r * k + kk] * w[kk * n + c]);
                        }
                        assertThat((double) got[r * n + c]).as("gemm %dx%dx%d gelu=%s at (%d,%d)", m, n, k, gelu, r, c)
                                .isCloseTo(expected[r * n + c], org.assertj.core.data.Offset.offset(1e-5 * scale + 1e-6));
                    }
                }
            }
        }
    }

    @Test
    void layerNormWithAndWithoutResidualMatchesJava() {
        for (int width : new int[] {100, 384}) {
            int rows = 50;
            float[] x = random(rows * width, 3), res = random(rows * width, 3);
            float[] gamma = random(width, 1), beta = random(width, 1);
            for (boolean residual : new boolean[] {false, true}) {
                float[] expected = new float[rows * width];
                MiniLmHostKernels.addLayerNorm(x, residual ? res : null, gamma, beta, expected, rows, width, 1e-12f);
                DeviceBuffer xs = upload(x);
                // in place, as the encoder runs it
                kernels.addLayerNorm(xs, residual ? upload(res) : null, upload(gamma), upload(beta), xs, rows, width,
                        1e-12f);
                assertClose(download(xs, rows * width), expected, 1e-4);
            }
        }
    }

    @Test
    void attentionOverPaddedSentencesMatchesJava() {
        int[][] shapes = {{12, 32}, {2, 48}, {1, 8}, {3, 128}};
        for (int[] s : shapes) {
            assertAttentionMatchesJava(s[0], s[1], new int[] {1, 7, 33, 20}, 33);
        }
    }

    @Test
    void attentionOverTheLongestSentenceMatchesJava() {
        assertAttentionMatchesJava(12, 32, new int[] {256, 3}, 256);
    }

    /** Sentences of {@code lengths} padded to {@code length}: the kernel's output equals the Java attention's. */
    private void assertAttentionMatchesJava(int heads, int headDim, int[] lengths, int length) {
        int hidden = heads * headDim, batch = lengths.length, rows = batch * length;
        float[] qkv = random(rows * 3 * hidden, 1);
        float[] expected = new float[rows * hidden];
        MiniLmHostKernels.attention(qkv, lengths, batch, length, heads, headDim, expected);
        DeviceBuffer out = alloc(rows * hidden);
        kernels.attention(upload(qkv), upload(lengths), batch, length, heads, headDim, out);
        assertClose(download(out, rows * hidden), expected, 1e-4);
    }

    @Test
    void meanPoolingUnderTheMaskThenL2NormMatchesJava() {
        int[] lengths = {1, 5, 12};
        int batch = 3, length = 12, width = 384;
        float[] hidden = random(batch * length * width, 2);
        float[] expected = new float[batch * width];
        MiniLmHostKernels.meanPoolNormalize(hidden, lengths, batch, length, width, expected);
        DeviceBuffer out = alloc(batch * width);
        kernels.meanPoolNormalize(upload(hidden), upload(lengths), batch, length, width, out);
        assertClose(download(out, batch * width), expected, 1e-5);
    }

    @Test
    void wholeEncoderWithRandomWeightsMatchesTheJavaEncoder() {
        MiniLmConfig config = new MiniLmConfig(500, 384, 2, 12, 1536, 300, 1e-12f);
        MiniLmWeights weights = MiniLmWeights.random(config, SEED);
        List<int[]> sentences = new ArrayList<>();
        for (int len : new int[] {2, 9, 64, 3, 256, 17}) {
            int[] ids = new int[len];
            ids[0] = 101 % config.vocab();
            for (int i = 1; i < len; i++) {
                ids[i] = rnd.nextInt(config.vocab());
            }
            sentences.add(ids);
        }
        float[][] expected = new MiniLmHostEncoder(weights).encode(sentences);
        try (MiniLmCudaEncoder encoder = new MiniLmCudaEncoder(kernels, weights)) {
            float[][] got = encoder.encode(sentences);
            for (int i = 0; i < sentences.size(); i++) {
                double cos = MiniLmGolden.cosine(got[i], expected[i]);
                System.out.printf("random-weights encoder, sentence of %d: cosine %.8f%n", sentences.get(i).length, cos);
                assertThat(cos).as("sentence %d", i).isGreaterThanOrEqualTo(0.9999);
            }
        }
    }

    private float[] random(int n, double scale) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) ((rnd.nextDouble() * 2 - 1) * scale);
        }
        return a;
    }

    private DeviceBuffer alloc(int floats) {
        DeviceBuffer b = device.allocate(4L * Math.max(1, floats));
        buffers.add(b);
        return b;
    }

    private DeviceBuffer upload(float[] values) {
        DeviceBuffer b = alloc(values.length);
        ByteBuffer bytes = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(values);
        device.copyFromHost(bytes, b, 0);
        return b;
    }

    private DeviceBuffer upload(int[] values) {
        DeviceBuffer b = alloc(values.length);
        ByteBuffer bytes = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asIntBuffer().put(values);
        device.copyFromHost(bytes, b, 0);
        return b;
    }

    private float[] download(DeviceBuffer b, int n) {
        ByteBuffer bytes = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(b, 0, bytes);
        float[] out = new float[n];
        bytes.asFloatBuffer().get(out);
        return out;
    }

    private static void assertClose(float[] got, float[] expected, double tolerance) {
        assertThat(got).hasSameSizeAs(expected);
        double worst = 0;
        int at = -1;
        for (int i = 0; i < got.length; i++) {
            double d = Math.abs(got[i] - expected[i]);
            if (!(d <= worst)) {
                worst = d;
                at = i;
            }
        }
        assertThat(worst).as("largest difference, at %d", at).isLessThanOrEqualTo(tolerance);
    }
}
