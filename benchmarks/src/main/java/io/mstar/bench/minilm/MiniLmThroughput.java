package io.mstar.bench.minilm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.mstar.bench.DriverLogging;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.GemmPrecision;
import io.mstar.worker.kernel.minilm.MiniLmCudaEncoder;
import io.mstar.worker.kernel.minilm.MiniLmCudaKernels;
import io.mstar.worker.kernel.minilm.MiniLmCudaSettings;
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
 *     [auto|host|cuda] [iterations=50] [batch=32] [tokens=128] [warmup=5] [--precision fp32,tf32,bf16]
 *     [--graphs on,off] [--batches 1,32] [--verbose]</pre>
 *
 * On CUDA it runs every combination of the listed precisions, graph modes and batch sizes, loading the weights once.
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
        List<String> positional = new ArrayList<>();
        List<GemmPrecision> precisions = List.of(GemmPrecision.FP32);
        List<Boolean> graphs = List.of(true);
        List<Integer> batches = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--precision" -> precisions = Arrays.stream(args[++i].split(","))
                        .map(v -> GemmPrecision.valueOf(v.toUpperCase(Locale.ROOT))).toList();
                case "--graphs" -> graphs = Arrays.stream(args[++i].split(",")).map("on"::equals).toList();
                case "--batches" -> batches = Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
                default -> positional.add(args[i]);
            }
        }
        String device = positional.size() > 0 ? positional.get(0) : "auto";
        int iterations = positional.size() > 1 ? Integer.parseInt(positional.get(1)) : 50;
        int sentences = positional.size() > 2 ? Integer.parseInt(positional.get(2)) : 32;
        int tokens = positional.size() > 3 ? Integer.parseInt(positional.get(3)) : 128;
        int warmup = positional.size() > 4 ? Integer.parseInt(positional.get(4)) : 5;
        if (batches == null) {
            batches = List.of(sentences);
        }
        if (device.equals("auto")) {
            device = CudaDevice.deviceCount() > 0 && MiniLmCudaKernels.available() ? "cuda" : "host";
        }
        long loadStart = System.nanoTime();
        MiniLmWeights weights = MiniLmWeights.fromSystemPropertyOrClasspath();
        System.out.printf(Locale.ROOT, "weights loaded in %.0f ms%n", (System.nanoTime() - loadStart) / 1e6);
        if (!device.equals("cuda")) {
            try (MiniLmEncoder encoder = new MiniLmHostEncoder(weights)) {
                for (int b : batches) {
                    run(encoder, "java/host", b, tokens, iterations, warmup);
                }
            }
            return;
        }
        try (CudaDevice cuda = new CudaDevice(0)) {
            MiniLmCudaKernels kernels = new MiniLmCudaKernels(cuda);
            System.out.println("products on " + (kernels.usesCublas() ? "cuBLAS" : "the hand-written SGEMM"));
            for (GemmPrecision precision : precisions) {
                for (boolean graphed : graphs) {
                    try (MiniLmCudaEncoder encoder = new MiniLmCudaEncoder(kernels, weights,
                            new MiniLmCudaSettings(precision, graphed))) {
                        for (int b : batches) {
                            run(encoder, "java/cuda " + precision + (graphed ? " graphs" : " eager"), b, tokens,
                                    iterations, warmup);
                        }
                    }
                }
            }
        }
    }

    private static void run(MiniLmEncoder encoder, String label, int sentences, int tokens, int iterations,
            int warmup) {
        List<int[]> batch = batch(sentences, tokens);
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
        System.out.printf(Locale.ROOT, "minilm-embed %s: batch %d x %d tokens, %d iterations: %.3f ms/batch, "
                + "%.1f sentences/s; first embedding[0:4] = %s%n", label, sentences, tokens, iterations, msPerBatch,
                sentences * iterations / seconds, Arrays.toString(Arrays.copyOf(out[0], 4)));
    }
}
