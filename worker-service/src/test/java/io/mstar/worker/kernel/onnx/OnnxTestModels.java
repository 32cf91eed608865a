package io.mstar.worker.kernel.onnx;

import io.mstar.testing.onnx.OnnxGraphWriter;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * The small ONNX graphs the kernel tests run, each with the plain-Java computation it must match. Axis names are the
 * graphs' own ({@code batch}, {@code seq}), as an exporter writes them.
 */
final class OnnxTestModels {

    static final String BATCH = "batch";
    static final String SEQ = "seq";

    private OnnxTestModels() {
    }

    /** {@code y = relu(x w + b)}: x float [batch, in], w [in, out], b [out]. */
    record Dense(Path file, int in, int out, float[] w, float[] b) {

        static Dense write(Path dir, Random random, int in, int out) {
            float[] w = uniform(random, in * out);
            float[] b = uniform(random, out);
            Path file = new OnnxGraphWriter()
                    .input("x", OnnxGraphWriter.FLOAT, BATCH, (long) in)
                    .initializer("w", w, in, out)
                    .initializer("b", b, out)
                    .node("MatMul", List.of("x", "w"), List.of("xw"))
                    .node("Add", List.of("xw", "b"), List.of("xwb"))
                    .node("Relu", List.of("xwb"), List.of("y"))
                    .output("y", OnnxGraphWriter.FLOAT, BATCH, (long) out)
                    .writeTo(dir.resolve("dense.onnx"));
            return new Dense(file, in, out, w, b);
        }

        float[] reference(float[] x) {
            int rows = x.length / in;
            float[] y = new float[rows * out];
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < out; c++) {
                    double s = b[c];
                    for (int k = 0; k < in; k++) {
                        s += (double) x[r * in + k] * w[k * out + c];
                    }
                    y[r * out + c] = (float) Math.max(0, s);
                }
            }
            return y;
        }
    }

    /**
     * A softmax over the real positions of each row: x float [batch, seq], mask int64 [batch, seq] (1 real, 0
     * padding), {@code y = softmax(x + (mask - 1) * 1e9)} along seq, so padding gets no weight.
     */
    static Path maskedSoftmax(Path dir) {
        return new OnnxGraphWriter()
                .input("x", OnnxGraphWriter.FLOAT, BATCH, SEQ)
                .input("mask", OnnxGraphWriter.INT64, BATCH, SEQ)
                .initializer("one", new float[] {1}, new long[0])
                .initializer("big", new float[] {1e9f}, new long[0])
                .node("Cast", List.of("mask"), List.of("maskf"), "to", OnnxGraphWriter.FLOAT)
                .node("Sub", List.of("maskf", "one"), List.of("off"))
                .node("Mul", List.of("off", "big"), List.of("bias"))
                .node("Add", List.of("x", "bias"), List.of("logits"))
                .node("Softmax", List.of("logits"), List.of("y"), "axis", -1)
                .output("y", OnnxGraphWriter.FLOAT, BATCH, SEQ)
                .writeTo(dir.resolve("masked-softmax.onnx"));
    }

    /** Softmax of each row of {@code x} ({@code rows x length}). */
    static float[] softmax(float[] x, int length) {
        float[] y = new float[x.length];
        for (int r = 0; r < x.length / length; r++) {
            double max = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < length; i++) {
                max = Math.max(max, x[r * length + i]);
            }
            double sum = 0;
            for (int i = 0; i < length; i++) {
                sum += Math.exp(x[r * length + i] - max);
            }
            for (int i = 0; i < length; i++) {
                y[r * length + i] = (float) (Math.exp(x[r * length + i] - max) / sum);
            }
        }
        return y;
    }

    /** A lookup table: ids [batch, seq] of {@code idType} index rows of table [rows, width]: z float [batch, seq, width]. */
    record Lookup(Path file, float[] table, int width) {

        static Lookup write(Path dir, Random random, int idType, int rows, int width) {
            float[] table = uniform(random, rows * width);
            Path file = new OnnxGraphWriter()
                    .input("ids", idType, BATCH, SEQ)
                    .initializer("table", table, rows, width)
                    .node("Gather", List.of("table", "ids"), List.of("z"), "axis", 0)
                    .output("z", OnnxGraphWriter.FLOAT, BATCH, SEQ, (long) width)
                    .writeTo(dir.resolve("lookup-" + idType + ".onnx"));
            return new Lookup(file, table, width);
        }

        float[] reference(long[] ids) {
            float[] z = new float[ids.length * width];
            for (int i = 0; i < ids.length; i++) {
                System.arraycopy(table, (int) ids[i] * width, z, i * width, width);
            }
            return z;
        }
    }

    static float[] uniform(Random random, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = random.nextFloat() * 2 - 1;
        }
        return a;
    }
}
