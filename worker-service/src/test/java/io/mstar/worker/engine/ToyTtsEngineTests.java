package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.model.ToyTtsDeployments;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.kernel.tts.ToyTtsSynth;

/**
 * toy-tts end to end through two real worker engines (in-process broker, real tensor transport, real KV caches),
 * disaggregated (lm on worker 1, codec on worker 0) and colocated (both on worker 0): the same request and seed give
 * byte-identical text and audio across runs, deployments and batch companions; EOS and max_tokens each end the
 * loop; the codec's chunks follow the sliding-window policy and join into the whole stream's synthesis; an abort
 * mid-generation leaves both workers at baseline (checked when each harness closes).
 */
class ToyTtsEngineTests {

    static final SamplingConfig SAMPLED = new SamplingConfig(null, 0.8, 40, 0.95, false, 1.0, 0L);
    static final SamplingConfig GREEDY = new SamplingConfig(null, 0.0, 0, 1.0, false, 1.0, 0L);
    static final SamplingConfig NO_EOS = new SamplingConfig(null, 0.8, 0, 1.0, true, 1.0, 0L);

    @TempDir
    Path dir;

    record Req(String prompt, int maxTokens, SamplingConfig sampling, long seed) {
        byte[] bytes() {
            return prompt.getBytes(StandardCharsets.UTF_8);
        }
    }

    record Out(byte[] text, byte[] audio, int chunks, boolean stopped) {
    }

    private static Out out(TtsHarness.Run run) {
        assertThat(run.failure).as(run.id).isNull();
        return new Out(run.textBytes(), run.audioBytes(), run.audio.size(), run.stopped);
    }

    /**
     * Starts every request at once (so the engines batch them; their messages are held and handed over in one burst,
     * however busy the machine), pumps to the end, answers outputs in order.
     */
    static List<Out> runAll(TtsHarness h, String tag, List<Req> reqs) throws Exception {
        h.broker.hold(s -> true);
        for (int i = 0; i < reqs.size(); i++) {
            Req r = reqs.get(i);
            h.start(tag + "-" + i, r.bytes(), r.maxTokens(), r.sampling(), r.seed());
        }
        h.broker.release();
        h.pumpUntilRemoved();
        List<Out> outs = new ArrayList<>();
        for (int i = 0; i < reqs.size(); i++) {
            outs.add(out(h.runs.get(tag + "-" + i)));
        }
        return outs;
    }

    @Test
    void sameRequestAndSeedGiveIdenticalTextAndAudioAcrossRunsDeploymentsAndBatches() throws Exception {
        long seed = Seeds.of("ToyTtsEngineTests");
        Random random = new Random(seed);
        List<Req> reqs = new ArrayList<>();
        String[] prompts = {"Hello there", "a", "", "The quick brown fox", "ünïcödé ✓"};
        for (String p : prompts) {
            reqs.add(new Req(p, 8 + random.nextInt(60), SAMPLED, random.nextLong()));
        }
        reqs.add(new Req("greedy one", 90, GREEDY, 1L));

        List<Out> disaggregated;
        List<Out> again;
        try (TtsHarness h = new TtsHarness(dir.resolve("d"), TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            disaggregated = runAll(h, "batched", reqs);
            again = new ArrayList<>();
            for (int i = 0; i < reqs.size(); i++) { // one at a time: other batch companions (none)
                Req r = reqs.get(i);
                again.add(out(h.run("alone-" + i, r.bytes(), r.maxTokens(), r.sampling(), r.seed())));
            }
        }
        List<Out> colocated;
        try (TtsHarness h = new TtsHarness(dir.resolve("c"), TtsHarness.COLOCATED, d -> ToyTtsKernels.host())) {
            colocated = runAll(h, "colocated", reqs);
        }

        // decode steps on host resident tables (docs/resident-planning.md): the same tokens, bit for bit
        List<Out> resident;
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (TtsHarness h = new TtsHarness(dir.resolve("r"), TtsHarness.DISAGGREGATED,
                d -> ToyTtsKernels.host(ResidentSettings.of(ResidentMode.ON), meters))) {
            resident = runAll(h, "resident", reqs);
            // the tables are held for the worker's life, like its KV pool (only the worker running lm has them)
            h.heldForLife(w -> w.kvState().poolBytes() > 0
                    ? (long) meters.get("mstar.worker.resident.tables").gauge().value() : 0);
        }
        assertThat(meters.counter("mstar.worker.resident.replays", "model", ToyTtsModel.NAME, "node", ToyTtsModel.LM)
                .count()).as("decode steps replayed on tables").isPositive();

        for (int i = 0; i < reqs.size(); i++) {
            Req r = reqs.get(i);
            Out o = disaggregated.get(i);
            assertThat(resident.get(i).text()).as("request " + i + " on resident tables").isEqualTo(o.text());
            assertThat(resident.get(i).audio()).as("request " + i + " on resident tables").isEqualTo(o.audio());
            String what = "request " + i + " '" + r.prompt() + "'";
            assertThat(o.text()).as(what).isNotEmpty();
            assertThat(again.get(i).text()).as(what + " alone").isEqualTo(o.text());
            assertThat(again.get(i).audio()).as(what + " alone").isEqualTo(o.audio());
            assertThat(colocated.get(i).text()).as(what + " colocated").isEqualTo(o.text());
            assertThat(colocated.get(i).audio()).as(what + " colocated").isEqualTo(o.audio());
            assertThat(o.text().length).as(what).isLessThanOrEqualTo(r.maxTokens());
            if (!o.stopped()) {
                assertThat(o.text().length).as(what + " ended without EOS: at max_tokens").isEqualTo(r.maxTokens());
            }
            assertThat(o.chunks()).as(what + " audio chunks").isEqualTo(ToyTtsModel.audioChunks(o.text().length));
            assertThat(colocated.get(i).chunks()).as(what).isEqualTo(o.chunks());
            // the windows, synthesised apart with their left context, join into the whole stream's synthesis
            assertThat(o.audio()).as(what + " audio").isEqualTo(pcm(ToyTtsSynth.stream(unsigned(o.text()))));
        }
        assertThat(disaggregated.get(0).text()).as("another seed, other text")
                .isNotEqualTo(againWithSeed(reqs.get(0), reqs.get(0).seed() + 1));
    }

    private byte[] againWithSeed(Req r, long seed) throws Exception {
        try (TtsHarness h = new TtsHarness(dir.resolve("s"), TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            return out(h.run("other-seed", r.bytes(), r.maxTokens(), r.sampling(), seed)).text();
        }
    }

    @Test
    void eosEndsTheLoopBeforeMaxTokensAndMaxTokensEndsItOtherwise() throws Exception {
        try (TtsHarness h = new TtsHarness(dir, TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            Out eos = out(h.run("eos", "Once upon a time".getBytes(StandardCharsets.UTF_8), 500, GREEDY, 3L));
            Out sampledEos = out(h.run("eos-sampled", "hi".getBytes(StandardCharsets.UTF_8), 500, SAMPLED, 4L));
            Out max = out(h.run("max", "Once upon a time".getBytes(StandardCharsets.UTF_8), 5, GREEDY, 3L));
            Out maxOddPasses = out(h.run("max-no-eos", "hi".getBytes(StandardCharsets.UTF_8), 37, NO_EOS, 5L));

            assertThat(eos.stopped()).as("greedy run ended by EOS").isTrue();
            assertThat(eos.text().length).isBetween(1, 499);
            assertThat(sampledEos.stopped()).isTrue();
            assertThat(sampledEos.text().length).isBetween(1, 499);
            assertThat(max.stopped()).isFalse();
            assertThat(max.text()).as("the first 5 tokens of the same greedy run").hasSize(5)
                    .isEqualTo(java.util.Arrays.copyOf(eos.text(), 5));
            assertThat(maxOddPasses.stopped()).isFalse();
            assertThat(maxOddPasses.text()).hasSize(37);
            for (Out o : List.of(eos, sampledEos, max, maxOddPasses)) {
                assertThat(o.chunks()).isEqualTo(ToyTtsModel.audioChunks(o.text().length));
                assertThat(o.audio()).hasSize(o.text().length * ToyTtsModel.SAMPLES_PER_TOKEN * 2);
            }
            TtsHarness.Run run = h.runs.get("eos");
            assertThat(run.codecDoneReports).as("exactly one codec report is final").isEqualTo(1);
            TtsHarness.Run long37 = h.runs.get("max-no-eos");
            assertThat(long37.inlineOutputs).as("every text token came inline").isGreaterThanOrEqualTo(37);
            assertThat(long37.readOutputs).as("audio chunks over the inline limit were read").isPositive();
        }
    }

    @Test
    void abortingMidGenerationLeavesBothWorkersAtBaseline() throws Exception {
        try (TtsHarness h = new TtsHarness(dir, TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            h.start("long", "abort me".getBytes(StandardCharsets.UTF_8), 3000, NO_EOS, 9L);
            h.start("short", "keep me".getBytes(StandardCharsets.UTF_8), 20, NO_EOS, 10L);
            TtsHarness.Run run = h.runs.get("long");
            h.pumpUntil(() -> run.text.size() >= 40 && run.audio.size() >= 3);
            h.teardown(run);
            h.pumpUntilRemoved();

            assertThat(run.lmDone).as("aborted while generating").isFalse();
            assertThat(run.text.size()).isLessThan(3000);
            assertThat(out(h.runs.get("short")).text()).hasSize(20);
            assertThat(h.w1.kvState().poolBytes()).as("lm ran on worker 1").isPositive();
            assertThat(h.w0.kvState().poolBytes()).as("no lm on worker 0").isZero();
        } // close(): both workers at baseline
    }

    @Test
    void textAndAudioAreTheSameWithTheStepsOnTheLoopPipelinedAndSpeculated() throws Exception {
        long seed = Seeds.of("ToyTtsEngineTests.stepModes");
        Random random = new Random(seed);
        List<Req> reqs = new ArrayList<>();
        for (String p : new String[] {"Hello there", "ab", "The quick brown fox", "x"}) {
            reqs.add(new Req(p, 20 + random.nextInt(40), random.nextBoolean() ? SAMPLED : NO_EOS, random.nextLong()));
        }
        Map<String, List<Out>> outs = new LinkedHashMap<>();
        Map<String, EngineProperties> modes = new LinkedHashMap<>();
        modes.put("on the loop", EngineProperties.defaults().withSteps(false, EngineProperties.Speculation.OFF));
        modes.put("pipelined", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF));
        modes.put("speculated", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON));
        for (Map.Entry<String, EngineProperties> mode : modes.entrySet()) {
            try (TtsHarness h = new TtsHarness(dir.resolve(mode.getKey().replace(' ', '-')), TtsHarness.DISAGGREGATED,
                    d -> ToyTtsKernels.host(), () -> new HostDevice(HostDevice.NAME, 64 << 20), mode.getValue())) {
                outs.put(mode.getKey(), runAll(h, "m", reqs));
                long speculated = h.w0.speculation()[0] + h.w1.speculation()[0];
                assertThat(speculated > 0).as("%s: speculated steps %d", mode.getKey(), speculated)
                        .isEqualTo(mode.getKey().equals("speculated"));
            } // close(): both workers at baseline, stream buffers empty, KV pages all free
        }
        List<Out> reference = outs.get("on the loop");
        outs.forEach((mode, got) -> {
            for (int i = 0; i < reqs.size(); i++) {
                assertThat(got.get(i).text()).as("%s, request %d (seed %d)", mode, i, seed)
                        .isEqualTo(reference.get(i).text());
                assertThat(got.get(i).audio()).as("%s, request %d (seed %d)", mode, i, seed)
                        .isEqualTo(reference.get(i).audio());
            }
        });
    }

    /**
     * With speculation on, a chain of speculated decode steps never ends while two requests whose passes end at
     * different steps keep coming back; a new request's prefill (another walk) breaks it at once rather than waiting
     * for both to finish.
     */
    @Test
    void aNewRequestsPrefillIsNotKeptWaitingBehindSpeculatedDecodeSteps() throws Exception {
        EngineProperties speculated = EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON);
        try (TtsHarness h = new TtsHarness(dir, TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host(),
                () -> new HostDevice(HostDevice.NAME, 64 << 20), speculated)) {
            h.start("long-a", "first".getBytes(StandardCharsets.UTF_8), 400, NO_EOS, 1L);
            h.pumpUntil(() -> h.runs.get("long-a").text.size() >= 8);
            h.start("long-b", "second".getBytes(StandardCharsets.UTF_8), 400, NO_EOS, 2L);
            h.pumpUntil(() -> h.runs.get("long-b").text.size() >= 8);
            h.start("late", "third".getBytes(StandardCharsets.UTF_8), 4, NO_EOS, 3L);
            h.pumpUntil(() -> h.runs.get("late").lmDone);
            int a = h.runs.get("long-a").text.size();
            int b = h.runs.get("long-b").text.size();
            h.pumpUntilRemoved();

            assertThat(out(h.runs.get("late")).text()).hasSize(4);
            assertThat(Math.min(a, b)).as("tokens of the long requests when the late one was done").isLessThan(400);
            assertThat(out(h.runs.get("long-a")).text()).hasSize(400);
            assertThat(out(h.runs.get("long-b")).text()).hasSize(400);
        }
    }

    /**
     * Page pressure with no host pool (docs/streaming-and-kv.md#preemption-by-recompute): 6 requests of 5 pages each on
     * an lm pool of 12 pages. Stuck requests are preempted by recompute, their KV recomputed from their fed tokens, and
     * each gets the text and audio it gets on a pool that holds them all.
     */
    @Test
    void recomputedUnderPagePressureTextAndAudioAreThoseOfAPoolThatHoldsThemAll() throws Exception {
        long seed = Seeds.of("ToyTtsEngineTests.recompute");
        Random random = new Random(seed);
        List<Req> reqs = new ArrayList<>();
        for (String p : new String[] {"Hello there", "ab", "The quick", "x", "recompute me", "page"}) {
            reqs.add(new Req(p, 56 + random.nextInt(8), random.nextBoolean() ? SAMPLED : NO_EOS, random.nextLong()));
        }
        List<Out> roomy;
        try (TtsHarness h = new TtsHarness(dir.resolve("roomy"), TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            roomy = runAll(h, "r", reqs);
        }
        EngineProperties noHostPool = EngineProperties.defaults().withKvHostPoolFactor(0);
        try (TtsHarness h = new TtsHarness(dir.resolve("tight"), ToyTtsDeployments.disaggregated(12),
                d -> ToyTtsKernels.host(), () -> new HostDevice(HostDevice.NAME, 64 << 20), noHostPool)) {
            List<Out> tight = runAll(h, "t", reqs);
            double recomputes = h.w1.registry.get(KvCaches.KV_MOVES).tags("move", "recompute").functionCounter()
                    .count();
            assertThat(recomputes).as("requests preempted by recompute (seed %d)", seed).isPositive();
            for (int i = 0; i < reqs.size(); i++) {
                assertThat(tight.get(i).text()).as("request %d (seed %d)", i, seed).isEqualTo(roomy.get(i).text());
                assertThat(tight.get(i).audio()).as("request %d (seed %d)", i, seed).isEqualTo(roomy.get(i).audio());
            }
            System.out.printf("ToyTtsEngineTests.recompute: seed %d, %.0f recomputes%n", seed, recomputes);
        } // close(): both workers at baseline, KV pages all free
    }

    static int[] unsigned(byte[] bytes) {
        int[] out = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = bytes[i] & 0xFF;
        }
        return out;
    }

    static byte[] pcm(short[] samples) {
        ByteBuffer b = ByteBuffer.allocate(samples.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        b.asShortBuffer().put(samples);
        return b.array();
    }
}
