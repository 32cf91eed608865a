package io.mstar.tensor.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;

/**
 * cuBLAS through the JavaCPP presets on JCuda's context and stream: the libraries load, products in every
 * {@link GemmPrecision} match a double-precision host product within that precision's tolerance, with the bias in
 * cuBLASLt's epilogue too, a product is captured into a {@link CudaGraph} and replayed on new inputs, and bad
 * operands are refused before anything runs.
 */
@Tag("gpu")
class CudaBlasGpuTests {

    private static final int[][] SHAPES = {{1, 1, 1}, {1, 384, 384}, {7, 13, 5}, {128, 1152, 384}, {4096, 384, 1536},
            {33, 1536, 384}};

    private CudaDevice device;
    private long baseline;

    @BeforeEach
    void open() {
        assertThat(CudaBlas.unavailableReason()).isEmpty();
        device = new CudaDevice(0);
        device.blas();
        baseline = device.stats().bytesInUse();
    }

    @AfterEach
    void close() {
        assertThat(device.stats().bytesInUse()).as("device bytes after the test").isEqualTo(baseline);
        device.close();
    }

    @Test
    void productsMatchTheHostInEveryPrecision() {
        long seed = System.nanoTime();
        System.out.println("CudaBlasGpuTests seed " + seed);
        Random random = new Random(seed);
        for (GemmPrecision precision : GemmPrecision.values()) {
            for (int[] s : SHAPES) {
                int m = s[0], n = s[1], k = s[2];
                float[] a = gaussian(random, m * k);
                float[] w = gaussian(random, k * n);
                float[] got = product(precision, a, w, null, m, n, k);
                double[] want = reference(precision, a, w, m, n, k);
                assertThat(relativeError(got, want)).as("%s %dx%dx%d, seed %d", precision, m, n, k, seed)
                        .isLessThan(tolerance(precision));
            }
        }
    }

    @Test
    void biasedProductsMatchTheHostInEveryPrecision() {
        long seed = System.nanoTime();
        System.out.println("CudaBlasGpuTests biased seed " + seed);
        Random random = new Random(seed);
        for (int pass = 0; pass < 2; pass++) { // the second pass reuses each shape's plan with new operands
            for (GemmPrecision precision : GemmPrecision.values()) {
                for (int[] s : SHAPES) {
                    int m = s[0], n = s[1], k = s[2];
                    float[] a = gaussian(random, m * k);
                    float[] w = gaussian(random, k * n);
                    float[] bias = gaussian(random, n);
                    float[] got = product(precision, a, w, bias, m, n, k);
                    double[] want = plusBias(reference(precision, a, w, m, n, k), bias);
                    assertThat(relativeError(got, want)).as("%s %dx%dx%d + bias, seed %d", precision, m, n, k, seed)
                            .isLessThan(tolerance(precision));
                }
            }
        }
    }

    @Test
    void aCapturedBiasedProductReplaysWithItsBias() {
        int m = 48, n = 80, k = 24;
        Random random = new Random(11);
        DeviceBuffer a = device.allocate(4L * m * k);
        DeviceBuffer w = device.allocate(4L * k * n);
        DeviceBuffer bias = device.allocate(4L * n);
        DeviceBuffer other = device.allocate(4L * n);
        DeviceBuffer out = device.allocate(4L * m * n);
        try (CudaGraph graph = device.capture(() -> device.blas().matmulBias(GemmPrecision.TF32, a, w, bias, out, m,
                n, k))) {
            // a product on another bias after the capture must not move the captured one's
            upload(new float[n], other);
            device.blas().matmulBias(GemmPrecision.TF32, a, w, other, out, m, n, k);
            for (int round = 0; round < 3; round++) {
                float[] av = gaussian(random, m * k);
                float[] wv = gaussian(random, k * n);
                float[] bv = gaussian(random, n);
                upload(av, a);
                upload(wv, w);
                upload(bv, bias);
                graph.launch();
                double[] want = plusBias(reference(GemmPrecision.TF32, av, wv, m, n, k), bv);
                assertThat(relativeError(download(out, m * n), want)).isLessThan(tolerance(GemmPrecision.TF32));
            }
        } finally {
            for (DeviceBuffer b : new DeviceBuffer[] {a, w, bias, other, out}) {
                device.free(b);
            }
        }
    }

    @Test
    void aCapturedProductReplaysOnNewInputs() {
        int m = 64, n = 96, k = 32;
        Random random = new Random(5);
        DeviceBuffer a = device.allocate(4L * m * k);
        DeviceBuffer w = device.allocate(4L * k * n);
        DeviceBuffer out = device.allocate(4L * m * n);
        try (CudaGraph graph = device.capture(() -> device.blas().matmul(GemmPrecision.FP32, a, w, out, m, n, k))) {
            for (int round = 0; round < 3; round++) {
                float[] av = gaussian(random, m * k);
                float[] wv = gaussian(random, k * n);
                upload(av, a);
                upload(wv, w);
                graph.launch();
                assertThat(relativeError(download(out, m * n), reference(GemmPrecision.FP32, av, wv, m, n, k)))
                        .isLessThan(tolerance(GemmPrecision.FP32));
            }
            assertThat(graph.launches()).isEqualTo(3);
        } finally {
            device.free(a);
            device.free(w);
            device.free(out);
        }
    }

    @Test
    void operandsThatDoNotFitAreRefusedAndTheDeviceGoesOn() {
        DeviceBuffer a = device.allocate(4L * 8 * 8);
        DeviceBuffer small = device.allocate(4L * 8);
        try {
            assertThatThrownBy(() -> device.blas().matmul(GemmPrecision.FP32, a, a, small, 8, 8, 8))
                    .isInstanceOf(DeviceException.class).hasMessageContaining("matmul out")
                    .extracting(e -> ((DeviceException) e).reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT);
            assertThat(device.isHealthy()).isTrue();
            assertThatThrownBy(() -> device.blas().matmulBias(GemmPrecision.FP32, a, a, small, a, 8, 16, 4))
                    .isInstanceOf(DeviceException.class).hasMessageContaining("matmul bias");
            assertThatThrownBy(() -> device.blas().matmulBias(GemmPrecision.FP32, a, a, small, a, 8, 8, 0))
                    .isInstanceOf(DeviceException.class).hasMessageContaining("k >= 1");
            assertThat(device.isHealthy()).isTrue();
            float[] ones = new float[64];
            java.util.Arrays.fill(ones, 1f);
            assertThat(product(GemmPrecision.FP32, ones, ones, null, 8, 8, 8)).containsOnly(8f);
            assertThat(product(GemmPrecision.FP32, ones, ones, java.util.Arrays.copyOf(ones, 8), 8, 8, 8))
                    .containsOnly(9f);
        } finally {
            device.free(a);
            device.free(small);
        }
    }

    /** {@code a · w} on the device, {@code + bias} in the epilogue unless it is null. */
    private float[] product(GemmPrecision precision, float[] a, float[] w, float[] bias, int m, int n, int k) {
        DeviceBuffer da = device.allocate(Math.max(1, (long) a.length * precision.operandBytes()));
        DeviceBuffer dw = device.allocate(Math.max(1, (long) w.length * precision.operandBytes()));
        DeviceBuffer db = device.allocate(4L * n);
        DeviceBuffer out = device.allocate(4L * m * n);
        try {
            if (precision == GemmPrecision.BF16) {
                device.copyFromHost(bf16(a), da, 0);
                device.copyFromHost(bf16(w), dw, 0);
            } else {
                upload(a, da);
                upload(w, dw);
            }
            if (bias == null) {
                device.blas().matmul(precision, da, dw, out, m, n, k);
            } else {
                upload(bias, db);
                device.blas().matmulBias(precision, da, dw, db, out, m, n, k);
            }
            return download(out, m * n);
        } finally {
            device.free(da);
            device.free(dw);
            device.free(db);
            device.free(out);
        }
    }

    /** The product in double, of the operands as the precision rounds them. */
    private static double[] reference(GemmPrecision precision, float[] a, float[] w, int m, int n, int k) {
        double[] out = new double[m * n];
        for (int i = 0; i < m; i++) {
            for (int kk = 0; kk < k; kk++) {
                double av = round(precision, a[i * k + kk]);
                for (int j = 0; j < n; j++) {
                    out[i * n + j] += av * round(precision, w[kk * n + j]);
                }
            }
        }
        return out;
    }

    private static double[] plusBias(double[] product, float[] bias) {
        for (int i = 0; i < product.length; i++) {
            product[i] += bias[i % bias.length];
        }
        return product;
    }

    private static double round(GemmPrecision precision, float v) {
        return precision == GemmPrecision.BF16 ? Float.intBitsToFloat((GemmPrecision.bf16(v) & 0xffff) << 16) : v;
    }

    private static double tolerance(GemmPrecision precision) {
        // max error over the largest |value|: FP32 accumulation; TF32 rounds each operand to 10 mantissa bits;
        // BF16 operands are rounded exactly as the reference rounds them, so only the accumulation differs
        return switch (precision) {
            case FP32 -> 1e-5;
            case TF32 -> 5e-3;
            case BF16 -> 1e-4;
        };
    }

    private static double relativeError(float[] got, double[] want) {
        double max = 1e-30;
        double err = 0;
        for (int i = 0; i < want.length; i++) {
            max = Math.max(max, Math.abs(want[i]));
            err = Math.max(err, Math.abs(got[i] - want[i]));
        }
        return err / max;
    }

    private static float[] gaussian(Random random, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) random.nextGaussian();
        }
        return v;
    }

    private static ByteBuffer bf16(float[] v) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.max(2, v.length * 2)).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putShort(GemmPrecision.bf16(f));
        }
        return b.flip();
    }

    private void upload(float[] v, DeviceBuffer dst) {
        ByteBuffer b = ByteBuffer.allocateDirect(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        device.copyFromHost(b, dst, 0);
    }

    private float[] download(DeviceBuffer src, int n) {
        ByteBuffer b = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(src, 0, b);
        float[] v = new float[n];
        b.asFloatBuffer().get(v);
        return v;
    }
}
