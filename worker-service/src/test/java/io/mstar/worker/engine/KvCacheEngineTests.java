package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.Loop;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.SpecialDestinations;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kv.PageAllocatorStats;
import io.mstar.worker.kv.TokenSampler;

/**
 * The engine's KV cache driven by a toy autoregressive node: {@code lm} in a loop writes the tokens it is given into
 * the KV slots the engine reserved, reads the request's whole sequence back from the cache (through its page list),
 * derives logits from it and samples the next token with the request's seed and sampling config. A wrong page
 * mapping, position, seed or config changes the tokens; the test predicts them with a plain Java model of the same
 * computation and a separate {@link TokenSampler}.
 */
class KvCacheEngineTests extends ToyWorkers {

    static final String MODEL = "toy_lm";
    static final String WALK = "generate";
    static final String LOOP = "gen_loop";
    static final String LM = "lm";
    static final int MAX_ITERS = 16;
    static final int VOCAB = 16;
    static final int PAGE_SIZE = 4;
    static final int MAX_PAGES = 10;
    /** step_metadata key: stop once the sequence (prompt and generated tokens fed back) is this long. */
    static final String LEN = "len";

    @Override
    ModelGraph graph() {
        return toyLm();
    }

    /**
     * The page counts below are exact: without speculation, whose step after a loop's last may take a free page that
     * it gives back once the loop ended (docs/worker-runtime.md#speculation).
     */
    @Override
    EngineProperties engineSettings() {
        return EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF);
    }

    /** {@code lm} in a loop of {@link #MAX_ITERS} feeding its token back. */
    static ModelGraph toyLm() {
        GraphNode lm = new GraphNode(LM, Set.of("tok"), List.of(new GraphEdge(LM, "tok", List.of()),
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, "out").outputModality("text").build()), false);
        return new ModelGraph(MODEL, List.of(new GraphWalk(WALK, new Loop(lm, MAX_ITERS, List.of(), List.of(), LOOP))));
    }

    @Override
    String deploymentYaml() {
        return toyLmDeployment();
    }

    /** {@code lm} on worker 0 with {@link #MAX_PAGES} pages of {@link #PAGE_SIZE}. */
    static String toyLmDeployment() {
        return """
                models:
                  - name: toy_lm
                    kv_cache:
                      page_size: %d
                      max_num_pages: %d
                    node_groups:
                      - node_names: [lm]
                        workers: [0]
                """.formatted(PAGE_SIZE, MAX_PAGES);
    }

    /** Logits of the toy model: a peak that depends on every token and its position. */
    static float[] logits(List<Integer> seq) {
        long h = 0;
        for (int p = 0; p < seq.size(); p++) {
            h += (long) seq.get(p) * (p + 1) * 31;
        }
        int target = (int) (h % VOCAB);
        float[] logits = new float[VOCAB];
        for (int j = 0; j < VOCAB; j++) {
            logits[j] = j == target ? 3f : ((j * 5 + seq.size()) % 7) * 0.4f;
        }
        return logits;
    }

    /** The toy node: one int32 per token in its slot. */
    static class ToyLm implements KvCacheKernel {

        private final boolean recordsFeeds;

        /** A toy lm whose every step first shows its calls to {@code seen}, then lasts at least {@code nanos}. */
        static ToyLm pausing(long nanos, Consumer<List<NodeCall>> seen) {
            return new ToyLm() {
                @Override
                public List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> steps) {
                    seen.accept(batch);
                    LockSupport.parkNanos(nanos);
                    return super.forward(device, batch, steps);
                }
            };
        }

        /** A kernel the engine may preempt by recompute. */
        ToyLm() {
            this(true);
        }

        /** @param recordsFeeds false: the kernel declares no recompute, so page pressure fails a stuck request */
        ToyLm(boolean recordsFeeds) {
            this.recordsFeeds = recordsFeeds;
        }

        @Override
        public boolean recordsFeeds() {
            return recordsFeeds;
        }

        @Override
        public long bytesPerToken() {
            return 4;
        }

        @Override
        public int tokensToAppend(NodeCall call) {
            return (int) call.input("tok").elementCount();
        }

        @Override
        public List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> steps) {
            List<NodeResult> results = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                NodeCall call = batch.get(i);
                KvStep step = steps.get(i);
                int[] given = step.feed(Int32Tensors.read(device, call.input("tok")));
                ByteBuffer one = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN);
                for (int k = 0; k < given.length; k++) {
                    one.clear();
                    one.putInt(0, given[k]);
                    device.copyFromHost(one, step.pool(), step.slot(step.runFrom() + k).byteOffset());
                }
                List<Integer> seq = new ArrayList<>();
                for (int p = 0; p < step.sequenceLength(); p++) {
                    one.clear();
                    device.copyToHost(step.pool(), step.slot(p).byteOffset(), one);
                    seq.add(one.getInt(0));
                }
                int next = step.sample(logits(seq));
                boolean done = step.sequenceLength() >= Integer.parseInt(call.info().stepMetadata().get(LEN));
                results.add(NodeResult.of(Map.of("tok", Int32Tensors.write(device, new int[] {next}),
                        "out", Int32Tensors.write(device, new int[] {next})), done));
            }
            return results;
        }
    }

    @Override
    ModelKernels kernels() {
        return new ModelKernels(MODEL, Map.of(LM, new ToyLm()));
    }

    /** What the toy model must produce, computed without the engine or a cache. */
    static List<Integer> expected(int[] prompt, int len, long seed, SamplingConfig config) {
        TokenSampler sampler = new TokenSampler();
        List<Integer> seq = new ArrayList<>();
        for (int t : prompt) {
            seq.add(t);
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < MAX_ITERS; i++) {
            int next = sampler.sample(logits(seq), config, seed, seq.size() - 1L);
            out.add(next);
            if (seq.size() >= len) {
                break;
            }
            seq.add(next);
        }
        return out;
    }

    record Req(String id, int[] prompt, int len, long seed, SamplingConfig sampling) {

        ToyConductor.Pass pass() {
            return new ToyConductor.Pass(WALK, List.of(new ToyConductor.Input(ToyConductor.W0, LM, "tok", prompt)),
                    Map.of(LEN, Integer.toString(len)),
                    sampling == null ? null : Map.of(LM, new MultiSamplingConfig(sampling, null)), seed);
        }

        List<Integer> expected() {
            return KvCacheEngineTests.expected(prompt, len, seed, sampling == null ? SamplingConfig.DEFAULT : sampling);
        }

        int pages() {
            return (len + PAGE_SIZE - 1) / PAGE_SIZE;
        }
    }

    @Test
    void concurrentRequestsGenerateFromTheirOwnPagesAndOnlyTheOneThatDoesNotFitFails() throws Exception {
        SamplingConfig topK = new SamplingConfig(null, 1.0, 5, 1.0, false, 1.0, 0L);
        List<Req> good = List.of(
                new Req("a", new int[] {3, 1, 4}, 9, 11L, topK),
                new Req("a-other-seed", new int[] {3, 1, 4}, 9, 99L, topK),
                new Req("b", new int[] {2, 7}, 8, 12L, new SamplingConfig(null, 0.0, 0, 1.0, false, 1.0, 0L)),
                new Req("c", new int[] {5}, 6, 13L, null));
        // 41 prompt tokens need 11 pages of the 10: its first call fails, before it takes any page
        Req big = new Req("big", IntStream.range(0, 41).map(i -> i % VOCAB).toArray(), 42, 14L, topK);
        assertThat(good.stream().mapToInt(Req::pages).sum()).isLessThanOrEqualTo(MAX_PAGES);
        assertThat(good.get(0).expected()).as("the seed matters to the toy model").isNotEqualTo(good.get(1).expected());

        List<Req> all = new ArrayList<>(good);
        all.add(1, big);
        all.forEach(r -> conductor.start(r.id(), List.of(r.pass())));
        conductor.pumpUntilRemoved(TIMEOUT);

        for (Req r : good) {
            ToyConductor.Run run = conductor.runs.get(r.id());
            assertThat(run.failure).as(r.id()).isNull();
            assertThat(run.firsts("out", 0)).as(r.id()).isEqualTo(r.expected()).hasSize(r.len() - r.prompt().length + 1);
        }
        assertThat(conductor.runs.get("big").failure).contains("can never fit", "has 10 pages");
        assertThat(conductor.runs.get("big").firsts("out", 0)).isEmpty();

        PageAllocatorStats stats = w0.loop.ask(s -> w0.kv.stats().get(MODEL + "/" + LM)).block(TIMEOUT);
        int pages = good.stream().mapToInt(Req::pages).sum();
        assertThat(stats.pagesAllocated()).as("pages taken").isEqualTo(pages);
        assertThat(stats.pagesFreed()).as("each freed once").isEqualTo(pages);
        assertThat(stats.exhaustions()).as("admission never asks for pages that are not free").isZero();
        assertThat(stats.freePages()).isEqualTo(MAX_PAGES);
        assertThat(w0.registry.get("mstar.worker.kv.pages").tags("node", LM, "state", "free").gauge().value())
                .isEqualTo(MAX_PAGES);
        assertThat(w0.registry.get("mstar.worker.kv.pages").tags("node", LM, "state", "used").gauge().value()).isZero();
        assertThat(w1.loop.ask(s -> w1.kv.poolBytes()).block(TIMEOUT)).as("w1 never ran lm: no pool").isZero();
    }

    @Test
    void aRemovedRequestGivesItsPagesBackAndALaterRequestReusesThem() throws Exception {
        Req first = new Req("first", new int[] {1, 2, 3, 4, 5, 6, 7}, 12, 21L, null);
        conductor.start(first.id(), List.of(first.pass()));
        conductor.pumpUntilRemoved(TIMEOUT);
        // 10 pages: a second request of 9 pages fits only if the first one's 3 came back
        Req second = new Req("second", IntStream.range(0, 33).map(i -> (i * 3) % VOCAB).toArray(), 36, 22L, null);
        conductor.start(second.id(), List.of(second.pass()));
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(conductor.runs.get("first").firsts("out", 0)).isEqualTo(first.expected());
        assertThat(conductor.runs.get("second").failure).isNull();
        assertThat(conductor.runs.get("second").firsts("out", 0)).isEqualTo(second.expected());
        PageAllocatorStats stats = w0.loop.ask(s -> w0.kv.stats().get(MODEL + "/" + LM)).block(TIMEOUT);
        assertThat(stats.pagesAllocated()).isEqualTo(first.pages() + second.pages());
        assertThat(stats.pagesFreed()).isEqualTo(stats.pagesAllocated());
        assertThat(stats.peakPagesInUse()).isEqualTo(second.pages());
    }
}
