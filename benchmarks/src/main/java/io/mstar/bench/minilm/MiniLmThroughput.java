package io.mstar.bench.minilm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.mstar.bench.DriverLogging;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.minilm.MiniLmCudaEncoder;
import io.mstar.worker.kernel.minilm.MiniLmCudaKernels;
import io.mstar.worker.kernel.minilm.MiniLmEncoder;
import io.mstar.worker.kernel.minilm.MiniLmHostEncoder;
import io.mstar.worker.kernel.minilm.MiniLmWeights;

/**
 * minilm-embed encoder throughput on one fixed batch (default 32 sentences x 128 word-pieces), the same batch
 * {@code benchmarks/python/minilm_torch.py} runs through PyTorch eager with the same weights: ids are
 * {@code [CLS], 1000 + (b * 131 + t * 17) % 20000 ..., [SEP]}. Times whole {@code encode} calls (ids up, forward,
 * pooled embeddings back) after warm-up and prints ms/batch and sentences/s, plus the first values of the first
 * embedding to compare with PyTorch's.
 *
 * <pre>java -Dmstar.minilm.onnx=all-minilm-l6-v2.onnx -cp ... io.mstar.bench.minilm.MiniLmThroughput \
 *     [auto|host|cuda] [iterations=50] [batch=32] [tokens=128] [warmup=5] [--verbose]</pre>
 *
 * Weights: {@code -Dmstar.minilm.onnx=PATH}, else the langchain4j artifact on the class path.
 */
public final class MiniLmThroughput {

    private MiniLmThroughput() {
    }

    /** The benchmark batch; {@code minilm_torch.py} builds the same. */
    static List<int[]> batch(int sentences, int tokens) {
        List<int[]> batch = new ArrayList<>();
        for (int b = 0; b < sentences; b++) {
            int[] ids = new int[tokens];
            ids[0] = 101;
            for (int t = 1; t < tokens - 1; t++) {
                ids[t] = 1000 + (b * 131 + t * 17) % 20000;
            }
            ids[tokens - 1] = 102;
            batch.add(ids);
        }
        return batch;
    }

    public static void main(String[] args) {
        args = DriverLogging.configure(args);
        String device = args.length > 0 ? args[0] : "auto";
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        int sentences = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        int tokens = args.length > 3 ? Integer.parseInt(args[3]) : 128;
        int warmup = args.length > 4 ? Integer.parseInt(args[4]) : 5;
        if (device.equals("auto")) {
            device = CudaDevice.deviceCount() > 0 && MiniLmCudaKernels.available() ? "cuda" : "host";
        }
        long loadStart = System.nanoTime();
        MiniLmWeights weights = MiniLmWeights.fromSystemPropertyOrClasspath();
        System.out.printf(Locale.ROOT, "weights loaded in %.0f ms%n", (System.nanoTime() - loadStart) / 1e6);
        List<int[]> batch = batch(sentences, tokens);
        CudaDevice cuda = device.equals("cuda") ? new CudaDevice(0) : null;
        try (MiniLmEncoder encoder = cuda != null ? new MiniLmCudaEncoder(new MiniLmCudaKernels(cuda), weights)
                : new MiniLmHostEncoder(weights)) {
            float[][] out = null;
            for (int i = 0; i < warmup; i++) {
                out = encoder.encode(batch);
            }
            long start = System.nanoTime();
            for (int i = 0; i < iterations; i++) {
                out = encoder.encode(batch);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            double msPerBatch = seconds * 1000 / iterations;
            System.out.printf(Locale.ROOT, "minilm-embed java/%s: batch %d x %d tokens, %d iterations: %.3f ms/batch, "
                    + "%.1f sentences/s%n", device, sentences, tokens, iterations, msPerBatch,
                    sentences * iterations / seconds);
            System.out.println("first embedding[0:4] = " + Arrays.toString(Arrays.copyOf(out[0], 4)));
        } finally {
            if (cuda != null) {
                cuda.close();
            }
        }
    }
}
