package io.mstar.worker.engine;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.mstar.graph.ModelGraph;
import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.minilm.MiniLmKernels;
import io.mstar.worker.kernel.minilm.MiniLmNodeKernel;
import io.mstar.worker.kernel.minilm.MiniLmOnnxEncoder;
import io.mstar.worker.kernel.minilm.MiniLmTokenizer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * minilm-embed through the worker engine with its real model (on ONNX Runtime, as a host worker runs it) and
 * tokenizer on {@code HostDevice}: requests of different lengths run together, each gets its embedding and word-piece
 * count, the cat is closer to the kitten than to the markets, a bad input fails alone, and nothing is left behind
 * (the leak check of {@link ToyWorkers}).
 */
class MiniLmEngineTests extends ToyWorkers {

    private static MiniLmOnnxEncoder alone;
    private static MiniLmNodeKernel kernel;

    @BeforeAll
    static void load() {
        alone = MiniLmOnnxEncoder.fromSystemPropertyOrClasspath();
        kernel = new MiniLmNodeKernel(MiniLmTokenizer.fromClasspath(), MiniLmOnnxEncoder.fromSystemPropertyOrClasspath());
    }

    @AfterAll
    static void close() {
        kernel.close();
        alone.close();
    }

    @Override
    ModelGraph graph() {
        return MiniLmModel.graph();
    }

    @Override
    String deploymentYaml() {
        return """
                models:
                  - name: minilm-embed
                    node_groups:
                      - node_names: [encode]
                        workers: [0]
                """;
    }

    /** The threads the encoder's batches ran on. */
    private final List<String> stepThreads = new CopyOnWriteArrayList<>();
    /** How much longer each of the encoder's batches takes than it would. */
    private volatile long extraMillis;

    @Override
    ModelKernels kernels() {
        return MiniLmKernels.of(kernel).with(MiniLmModel.ENCODE, new NodeKernel() {
            @Override
            public int maxBatchSize() {
                return kernel.maxBatchSize();
            }

            @Override
            public List<NodeResult> forward(Device device, List<NodeCall> batch) {
                stepThreads.add(Thread.currentThread().getName());
                if (extraMillis > 0) {
                    try {
                        Thread.sleep(extraMillis);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return kernel.forward(device, batch);
            }
        });
    }

    private void embed(String id, String text) {
        conductor.start(id, List.of(new ToyConductor.Pass(MiniLmModel.EMBED, List.of(new ToyConductor.Input(ToyConductor.W0,
                MiniLmModel.ENCODE, MiniLmModel.TEXT, null, text.getBytes(StandardCharsets.UTF_8))), Map.of())));
    }

    private float[] embedding(String id) {
        int[] bits = conductor.runs.get(id).outputs.get(MiniLmModel.EMBEDDING).get(0).get(0);
        float[] e = new float[bits.length];
        for (int i = 0; i < bits.length; i++) {
            e[i] = Float.intBitsToFloat(bits[i]);
        }
        return e;
    }

    @Test
    void catIsCloserToKittenThanToMarketsAndEachRequestGetsItsOwnEmbedding() throws Exception {
        String[] texts = {"a cat sits on the mat", "a kitten is on a rug", "stock markets fell",
                "The orchestra performed Beethoven's Ninth Symphony to a standing ovation."};
        for (int i = 0; i < texts.length; i++) {
            embed("r-" + i, texts[i]);
        }
        conductor.pumpUntilRemoved(TIMEOUT);

        try (MiniLmTokenizer tokenizer = MiniLmTokenizer.fromClasspath()) {
            for (int i = 0; i < texts.length; i++) {
                ToyConductor.Run run = conductor.runs.get("r-" + i);
                assertThat(run.failure).isNull();
                int[] ids = tokenizer.encode(texts[i]);
                assertThat(run.outputs.get(MiniLmModel.NUM_TOKENS).get(0).get(0)).containsExactly(ids.length);
                float[] got = embedding("r-" + i);
                assertThat(got).hasSize(MiniLmModel.EMBEDDING_DIM);
                // whatever the batch it ran in, padding and mask leave it equal to the sentence run alone
                float[] expected = alone.encode(List.of(ids))[0];
                for (int c = 0; c < got.length; c++) {
                    assertThat(got[c]).isCloseTo(expected[c], org.assertj.core.data.Offset.offset(1e-5f));
                }
            }
        }
        double kitten = cosine(embedding("r-0"), embedding("r-1"));
        double markets = cosine(embedding("r-0"), embedding("r-2"));
        System.out.printf("engine: cat~kitten %.4f, cat~markets %.4f%n", kitten, markets);
        assertThat(kitten).isGreaterThan(markets);
    }

    /**
     * A one-shot node on a host device runs on the engine loop, not handed to the step thread and back: nothing could
     * be speculated after it, and the hand-offs cost the request's latency (StepPipeline#runsOnLoop). Its first step,
     * of a length nobody knows yet, goes to the step thread (and so may a second one after a cold first).
     */
    @Test
    void theEncodersShortStepsRunOnTheEngineLoopOfAHostWorker() throws Exception {
        for (int i = 0; i < 6; i++) {
            embed("loop-" + i, "sentence number " + i);
            conductor.pumpUntilRemoved(TIMEOUT);
        }
        assertThat(conductor.runs.values()).allSatisfy(run -> assertThat(run.failure).isNull());
        assertThat(stepThreads).hasSize(6);
        assertThat(stepThreads.get(0)).isEqualTo("mstar-" + ToyConductor.W0.value() + "-step");
        assertThat(stepThreads.subList(3, 6)).containsOnly(EngineLoop.threadName(ToyConductor.W0));
    }

    /** A step longer than the loop may block for stays on the step thread: the loop's heartbeats must not wait for it. */
    @Test
    void aLongStepStaysOnTheStepThread() throws Exception {
        extraMillis = StepPipeline.LOOP_STEP_MAX_NANOS / 1_000_000 + 10;
        for (int i = 0; i < 3; i++) {
            embed("long-" + i, "sentence number " + i);
            conductor.pumpUntilRemoved(TIMEOUT);
        }
        assertThat(conductor.runs.values()).allSatisfy(run -> assertThat(run.failure).isNull());
        assertThat(stepThreads).hasSize(3).containsOnly("mstar-" + ToyConductor.W0.value() + "-step");
    }

    @Test
    void anInt32InputFailsThatRequestAlone() throws Exception {
        embed("good", "a cat sits on the mat");
        conductor.start("bad", List.of(new ToyConductor.Pass(MiniLmModel.EMBED, List.of(new ToyConductor.Input(
                ToyConductor.W0, MiniLmModel.ENCODE, MiniLmModel.TEXT, new int[] {1, 2, 3})), Map.of())));
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(conductor.runs.get("bad").failure).contains("uint8");
        assertThat(conductor.runs.get("good").failure).isNull();
        assertThat(conductor.runs.get("good").outputs).containsKeys(MiniLmModel.EMBEDDING, MiniLmModel.NUM_TOKENS);
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }
}
