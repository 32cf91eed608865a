package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.TPNoSpeculation;
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.tp.RejoiningCollective;

/**
 * The toy-tts {@code lm} sharded over a tensor-parallel group of two in-process workers (docs/tensor-parallelism.md):
 * worker 0 leads (and runs the codec), worker 1 follows; their ranks meet in a real shared-memory collective. Text
 * and audio are byte for byte those of the lm on one worker, for the same requests and seeds, batched together, with
 * the steps on the loop, pipelined and speculated; an abort leaves both workers at baseline.
 */
class ToyTtsTensorParallelEngineTests {

    static final String TP2 = """
            models:
              - name: toy-tts
                kv_cache: {page_size: 16, max_num_pages: 256}
                node_groups:
                  - node_names: [codec]
                    workers: [0]
                  - node_names: [lm]
                    workers: [0, 1]
                    tp_size: 2
            """;

    @TempDir
    Path dir;

    /**
     * The codec on the follower, which so has work of its own beside the leader's batches, and lm pools of 10 pages
     * per rank, which the requests overflow: the leader offloads and reloads, the follower replays.
     */
    static final String TP2_BUSY_FOLLOWER = """
            models:
              - name: toy-tts
                kv_cache: {page_size: 16, max_num_pages: 10}
                node_groups:
                  - node_names: [codec]
                    workers: [1]
                  - node_names: [lm]
                    workers: [0, 1]
                    tp_size: 2
            """;

    private TtsHarness tp2(String name, EngineProperties engine) {
        return tp2(name, TP2, engine);
    }

    private TtsHarness tp2(String name, String yaml, EngineProperties engine) {
        Path file = dir.resolve(name + ".collective");
        return new TtsHarness(dir.resolve(name), yaml, (worker, device) -> ToyTtsKernels.tensorParallel(device,
                new RejoiningCollective(new SharedMemoryCollectiveSettings(file, worker, 2,
                        SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES, Duration.ofSeconds(20)))),
                () -> new HostDevice(HostDevice.NAME, 64 << 20), engine);
    }

    static List<ToyTtsEngineTests.Req> requests(long seed) {
        Random random = new Random(seed);
        List<ToyTtsEngineTests.Req> reqs = new ArrayList<>();
        for (String p : new String[] {"Hello there", "a", "", "The quick brown fox", "ünïcödé ✓"}) {
            reqs.add(new ToyTtsEngineTests.Req(p, 8 + random.nextInt(50), ToyTtsEngineTests.SAMPLED, random.nextLong()));
        }
        reqs.add(new ToyTtsEngineTests.Req("greedy one", 60, ToyTtsEngineTests.GREEDY, 1L));
        reqs.add(new ToyTtsEngineTests.Req("no eos", 40, ToyTtsEngineTests.NO_EOS, 3L));
        return reqs;
    }

    @Test
    void textAndAudioOfATensorParallelLmAreThoseOfOneWorkerInEveryStepMode() throws Exception {
        long seed = Seeds.of("ToyTtsTensorParallelEngineTests");
        List<ToyTtsEngineTests.Req> reqs = requests(seed);
        List<ToyTtsEngineTests.Out> reference = onOneWorker("one", reqs);
        List<EngineProperties> modes = List.of(
                EngineProperties.defaults().withSteps(false, EngineProperties.Speculation.OFF),
                EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF),
                EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON));
        for (int m = 0; m < modes.size(); m++) {
            List<ToyTtsEngineTests.Out> got;
            int schedules;
            try (TtsHarness h = tp2("tp2-" + m, modes.get(m))) {
                got = ToyTtsEngineTests.runAll(h, "tp2", reqs);
                List<ScheduleTPNode> sent = h.broker.sentTo(h.w1.id.value(), ScheduleTPNode.class);
                schedules = sent.size();
                long speculated = sent.stream().filter(ScheduleTPNode::speculative).count();
                int none = h.broker.sentTo(h.w1.id.value(), TPNoSpeculation.class).size();
                // with speculation on, every lead step is followed by one decision: a batch speculated on it, or none
                boolean on = modes.get(m).speculation() == EngineProperties.Speculation.ON;
                assertThat(speculated + none).as("decisions, one per lead step (mode %d)", m)
                        .isEqualTo(on ? schedules : 0);
                if (on) {
                    assertThat(speculated).as("batches speculated on a running one").isPositive();
                }
                assertThat(h.w1.kvState().poolBytes()).as("the follower holds its own half of the KV").isPositive();
            } // close(): both workers at baseline
            assertThat(schedules).as("batches the leader broadcast (mode %d)", m).isPositive();
            assertSameOutputs(got, reference, "mode " + m + ", seed " + seed);
        }
    }

    /** The requests' outputs with the lm on one worker: what every TP2 run must give byte for byte. */
    private List<ToyTtsEngineTests.Out> onOneWorker(String name, List<ToyTtsEngineTests.Req> reqs) throws Exception {
        try (TtsHarness h = new TtsHarness(dir.resolve(name), TtsHarness.DISAGGREGATED, d -> ToyTtsKernels.host())) {
            return ToyTtsEngineTests.runAll(h, "one", reqs);
        }
    }

    static void assertSameOutputs(List<ToyTtsEngineTests.Out> got, List<ToyTtsEngineTests.Out> reference,
            String run) {
        assertThat(got).as(run).hasSameSizeAs(reference);
        for (int i = 0; i < reference.size(); i++) {
            String what = run + ", request " + i;
            assertThat(new String(got.get(i).text(), StandardCharsets.ISO_8859_1)).as(what)
                    .isEqualTo(new String(reference.get(i).text(), StandardCharsets.ISO_8859_1));
            assertThat(got.get(i).audio()).as(what).isEqualTo(reference.get(i).audio());
            assertThat(got.get(i).stopped()).as(what).isEqualTo(reference.get(i).stopped());
        }
    }

    @Test
    void aFollowerWithWorkOfItsOwnAndTooFewPagesTakesTheLeadersMovesAndTheOutputsStay() throws Exception {
        long seed = Seeds.of("ToyTtsTensorParallelEngineTests.busyFollower");
        // none stops early at an EOS: together they need 4 to 7 times the 10 pages, whatever the timing of batches
        Random random = new Random(seed);
        List<ToyTtsEngineTests.Req> reqs = new ArrayList<>();
        for (String p : new String[] {"Hello there", "a", "", "The quick brown fox", "ünïcödé ✓", "greedy", "six"}) {
            reqs.add(new ToyTtsEngineTests.Req(p, 48 + random.nextInt(48), ToyTtsEngineTests.NO_EOS, random.nextLong()));
        }
        List<ToyTtsEngineTests.Out> reference = onOneWorker("roomy", reqs);
        try (TtsHarness h = tp2("busy-follower", TP2_BUSY_FOLLOWER, EngineProperties.defaults())) {
            assertSameOutputs(ToyTtsEngineTests.runAll(h, "b", reqs), reference, "busy follower, seed " + seed);
            double offloads = h.w0.registry.get(KvCaches.KV_MOVES).tags("move", "offload").functionCounter().count();
            assertThat(offloads).as("the leader offloaded (seed %d)", seed).isPositive();
            assertThat(h.w1.registry.get(KvCaches.KV_MOVES).tags("move", "offload").functionCounter().count())
                    .as("the follower replayed them").isPositive().isLessThanOrEqualTo(offloads);
            for (String kind : List.of(EngineMeters.RESIDENT_MISMATCH, EngineMeters.DROPPED_BATCH,
                    EngineMeters.SKIPPED_CALL, EngineMeters.UNRELAYED_REMOVAL)) {
                assertThat(h.w1.registry.get(EngineMeters.Definition.LOCKSTEP_ANOMALIES.declaration().name())
                        .tag("kind", kind).counter().count()).as("follower anomalies: %s", kind).isZero();
            }
        } // close(): both workers at baseline
    }

    @Test
    void abortingMidGenerationLeavesBothRanksAtBaseline() throws Exception {
        try (TtsHarness h = tp2("abort", EngineProperties.defaults())) {
            h.start("long", "abort me".getBytes(StandardCharsets.UTF_8), 3000, ToyTtsEngineTests.NO_EOS, 9L);
            h.start("short", "keep me".getBytes(StandardCharsets.UTF_8), 20, ToyTtsEngineTests.NO_EOS, 10L);
            TtsHarness.Run run = h.runs.get("long");
            h.pumpUntil(() -> run.text.size() >= 40 && run.audio.size() >= 3);
            h.teardown(run);
            h.pumpUntilRemoved();
            h.pumpUntil(() -> h.w1.requests() == 0 && h.w0.requests() == 0);
            assertThat(run.lmDone).as("aborted while generating").isFalse();
            assertThat(h.runs.get("short").textBytes()).hasSize(20);
        } // close(): both workers at baseline
    }
}
