package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.mstar.testing.onnx.OnnxGraphWriter;

/**
 * The model of {@code examples/onnx-two-node.yaml}, in one place: its two ONNX files with weights from a fixed
 * formula, and the same computation in plain Java as the reference. {@code hidden} computes
 * {@code h = relu(x W1 + b1)} (x float32 [batch, 4], h [batch, 8]); {@code head} computes
 * {@code y = softmax(h W2 + b2)} along the last axis (y [batch, 3]).
 *
 * <p>Regenerate the committed files (the e2e test proves they equal what this writes) with, from the project root:
 * {@code java -cp e2e-tests/target/test-classes:test-support/target/classes:<protobuf-java jar>
 * io.mstar.stack.OnnxTwoNodeExample examples/onnx}.
 */
final class OnnxTwoNodeExample {

    static final String DEPLOYMENT = "examples/onnx-two-node.yaml";
    static final String MODEL = "onnx-two-node";
    static final String HIDDEN_FILE = "two-node-hidden.onnx";
    static final String HEAD_FILE = "two-node-head.onnx";
    static final int IN = 4;
    static final int HIDDEN = 8;
    static final int OUT = 3;
    private static final String BATCH = "batch";

    private OnnxTwoNodeExample() {
    }

    static float[] w1() {
        return values(IN * HIDDEN, i -> ((i * 5 + 3) % 7 - 3) / 4f);
    }

    static float[] b1() {
        return values(HIDDEN, i -> (i % 3 - 1) / 8f);
    }

    static float[] w2() {
        return values(HIDDEN * OUT, i -> ((i * 3 + 1) % 5 - 2) / 4f);
    }

    static float[] b2() {
        return new float[] {0.1f, -0.2f, 0.05f};
    }

    static byte[] hidden() {
        return new OnnxGraphWriter()
                .input("X", OnnxGraphWriter.FLOAT, BATCH, (long) IN)
                .initializer("W1", w1(), IN, HIDDEN)
                .initializer("B1", b1(), HIDDEN)
                .node("MatMul", List.of("X", "W1"), List.of("XW"))
                .node("Add", List.of("XW", "B1"), List.of("XWB"))
                .node("Relu", List.of("XWB"), List.of("H"))
                .output("H", OnnxGraphWriter.FLOAT, BATCH, (long) HIDDEN)
                .toBytes();
    }

    static byte[] head() {
        return new OnnxGraphWriter()
                .input("H", OnnxGraphWriter.FLOAT, BATCH, (long) HIDDEN)
                .initializer("W2", w2(), HIDDEN, OUT)
                .initializer("B2", b2(), OUT)
                .node("MatMul", List.of("H", "W2"), List.of("HW"))
                .node("Add", List.of("HW", "B2"), List.of("Z"))
                .node("Softmax", List.of("Z"), List.of("Y"), "axis", -1)
                .output("Y", OnnxGraphWriter.FLOAT, BATCH, (long) OUT)
                .toBytes();
    }

    /** {@code y} for {@code x} of {@code x.length / IN} rows, in double. */
    static double[] reference(float[] x) {
        int rows = x.length / IN;
        float[] w1 = w1(), b1 = b1(), w2 = w2(), b2 = b2();
        double[] y = new double[rows * OUT];
        for (int r = 0; r < rows; r++) {
            double[] h = new double[HIDDEN];
            for (int j = 0; j < HIDDEN; j++) {
                double s = b1[j];
                for (int k = 0; k < IN; k++) {
                    s += x[r * IN + k] * (double) w1[k * HIDDEN + j];
                }
                h[j] = Math.max(0, s);
            }
            double[] z = new double[OUT];
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < OUT; j++) {
                double s = b2[j];
                for (int k = 0; k < HIDDEN; k++) {
                    s += h[k] * w2[k * OUT + j];
                }
                z[j] = s;
                max = Math.max(max, s);
            }
            double sum = 0;
            for (int j = 0; j < OUT; j++) {
                z[j] = Math.exp(z[j] - max);
                sum += z[j];
            }
            for (int j = 0; j < OUT; j++) {
                y[r * OUT + j] = z[j] / sum;
            }
        }
        return y;
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "examples/onnx");
        Files.createDirectories(dir);
        Files.write(dir.resolve(HIDDEN_FILE), hidden());
        Files.write(dir.resolve(HEAD_FILE), head());
        System.out.println("wrote " + dir.resolve(HIDDEN_FILE) + " and " + dir.resolve(HEAD_FILE));
    }

    private interface Formula {
        float at(int i);
    }

    private static float[] values(int n, Formula f) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = f.at(i);
        }
        return v;
    }
}
