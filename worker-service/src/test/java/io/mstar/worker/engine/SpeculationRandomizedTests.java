package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.testing.Seeds;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.StopLoops;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;

/**
 * The step pipeline with speculation on (docs/worker-runtime.md#speculation), driven by the KV toy model of
 * {@link KvCacheEngineTests} through a kernel whose step timing the test controls: seeded random step lengths, and per request a planned event landing while its step N runs, so while N+1 is
 * speculated: an abort (drain, then removal), a {@code StopLoops}, a per-request failure, or a whole step throwing.
 * After each round every tensor was freed exactly once, the KV pages are all free and both workers are at baseline.
 */
class SpeculationRandomizedTests extends ToyLmWorkers {

    static final String MODEL = KvCacheEngineTests.MODEL;
    static final String LM = KvCacheEngineTests.LM;
    static final String LOOP = KvCacheEngineTests.LOOP;
    static final int VOCAB = KvCacheEngineTests.VOCAB;

    enum Event { NONE, ABORT, STOP_LOOPS, FAIL, STEP_THROWS }

    /** What the kernel does for a request, planned by the test's seed. */
    record Plan(Event event, int atIteration) {
    }

    final Map<String, Plan> plans = new ConcurrentHashMap<>();
    final Set<String> abortsDue = ConcurrentHashMap.newKeySet();
    final AtomicInteger steps = new AtomicInteger();
    volatile Random timing = new Random(0);
    /** A step waits here while the test holds it (the long-step test); null lets every step through. */
    volatile CountDownLatch hold;
    final AtomicBoolean holding = new AtomicBoolean();

    @Override
    EngineProperties engineSettings() {
        return EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON);
    }

    @Override
    ModelKernels kernels() {
        KvCacheEngineTests.ToyLm lm = new KvCacheEngineTests.ToyLm();
        return new ModelKernels(MODEL, Map.of(LM, new KvCacheKernel() {
            @Override
            public long bytesPerToken() {
                return lm.bytesPerToken();
            }

            @Override
            public int tokensToAppend(NodeCall call) {
                return lm.tokensToAppend(call);
            }

            @Override
            public List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> kv) {
                steps.incrementAndGet();
                awaitHold();
                sleepMicros(timing.nextInt(3000));
                List<NodeCall> run = new ArrayList<>();
                List<KvStep> runKv = new ArrayList<>();
                NodeResult[] results = new NodeResult[batch.size()];
                for (int i = 0; i < batch.size(); i++) {
                    NodeCall call = batch.get(i);
                    Plan plan = plans.getOrDefault(call.requestId(), new Plan(Event.NONE, -1));
                    int iteration = call.position().loopIndices().getOrDefault(LOOP, -1);
                    if (iteration == plan.atIteration()) {
                        switch (plan.event()) {
                            case ABORT -> abortsDue.add(call.requestId());
                            case STOP_LOOPS -> broker.fromConductor(ToyConductor.W0, WorkerMessage.of(new StopLoops(
                                    call.requestId(), Set.of(LOOP), CounterConductor.DEFAULT, Map.of(LOOP,
                                    new NestedLoopIndices(List.of(LOOP), Map.of(LOOP, iteration), 0)))));
                            case FAIL -> results[i] = NodeResult.failed(WorkerErrorType.KERNEL_FAILED, "planned failure");
                            case STEP_THROWS -> throw new IllegalStateException("planned step failure");
                            case NONE -> { }
                        }
                    }
                    if (results[i] == null) {
                        run.add(call);
                        runKv.add(kv.get(i));
                    }
                }
                List<NodeResult> out = lm.forward(device, run, runKv);
                for (int i = 0, j = 0; i < results.length; i++) {
                    if (results[i] == null) {
                        results[i] = out.get(j++);
                    }
                }
                return List.of(results);
            }
        }));
    }

    private void awaitHold() {
        CountDownLatch h = hold;
        if (h != null) {
            holding.set(true);
            try {
                if (!h.await(20, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the step");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                holding.set(false);
            }
        }
    }

    private static void sleepMicros(int micros) {
        long until = System.nanoTime() + micros * 1000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    @Test
    void removalsStopsAndFailuresWhileStepsRunAndAreSpeculatedLeaveNothingBehind() throws Exception {
        long seed = Seeds.of("SpeculationRandomizedTests");
        Random random = new Random(seed);
        timing = new Random(random.nextLong());
        SamplingConfig topK = new SamplingConfig(null, 1.0, 5, 1.0, false, 1.0, 0L);
        for (int round = 0; round < 8; round++) {
            List<KvCacheEngineTests.Req> reqs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                int[] prompt = random.ints(1 + random.nextInt(3), 0, VOCAB).toArray();
                // at most 2 pages of 4 positions each, 10 in all: every request fits, so only planned events end one
                int len = prompt.length + 1 + random.nextInt(4);
                String id = "r" + round + "-" + i;
                reqs.add(new KvCacheEngineTests.Req(id, prompt, len, random.nextLong(), random.nextBoolean() ? topK : null));
                Event event = Event.values()[random.nextInt(Event.values().length)];
                int generated = len - prompt.length + 1;
                plans.put(id, new Plan(event == Event.STEP_THROWS && random.nextBoolean() ? Event.NONE : event,
                        random.nextInt(generated)));
            }
            reqs.forEach(r -> conductor.start(r.id(), List.of(r.pass())));
            conductor.pumpUntil(() -> {
                for (String id : List.copyOf(abortsDue)) {
                    abortsDue.remove(id);
                    conductor.abort(id);
                }
                return reqs.stream().allMatch(r -> conductor.runs.get(r.id()).removed);
            }, TIMEOUT);
            for (KvCacheEngineTests.Req r : reqs) {
                check(r, plans.get(r.id()), conductor.runs.get(r.id()), seed);
            }
        }
        for (TestWorker w : List.of(w0, w1)) {
            assertThat(w.loop.ask(s -> s.engine().unknownReleases()).block(TIMEOUT)).as("releases of freed tensors")
                    .isZero();
        }
        long[] speculation = w0.speculation();
        assertThat(speculation[0]).as("speculated steps (seed %d)", seed).isPositive();
        System.out.printf("SpeculationRandomizedTests: seed %d, %d steps, %d speculated, %d speculated calls voided%n",
                seed, steps.get(), speculation[0], speculation[1]);
    }

    /** What each planned event allows a request's outputs to be; any may share a step another plan made throw. */
    private static void check(KvCacheEngineTests.Req r, Plan plan, ToyConductor.Run run, long seed) {
        List<Integer> expected = r.expected();
        List<Integer> out = run.firsts("out", 0);
        String what = r.id() + " " + plan + " (seed " + seed + ")";
        assertThat(run.removed).as(what).isTrue();
        if (run.failure != null && run.failure.contains("planned step failure")) {
            assertThat(out).as(what).isEqualTo(expected.subList(0, out.size()));
            return;
        }
        switch (plan.event()) {
            case NONE -> assertThat(out).as(what).isEqualTo(expected);
            case FAIL -> assertThat(run.failure).as(what).contains("planned failure");
            case STEP_THROWS -> assertThat(run.failure).as(what).isNotNull();
            case STOP_LOOPS -> {
                // the stop lands while iteration k or k+1 is current; that iteration completes, none after it
                assertThat(run.failure).as(what).isNull();
                assertThat(out).as(what).isEqualTo(expected.subList(0, out.size()));
                assertThat(out.size()).as(what).isBetween(Math.min(plan.atIteration() + 1, expected.size()),
                        Math.min(plan.atIteration() + 2, expected.size()));
            }
            case ABORT -> {
                assertThat(run.failure).as(what).isNull();
                assertThat(out).as(what).isEqualTo(expected.subList(0, out.size()));
            }
        }
    }

    @Test
    void controlMessagesAreHandledWhileALongStepRuns() throws Exception {
        hold = new CountDownLatch(1);
        KvCacheEngineTests.Req slow = new KvCacheEngineTests.Req("slow", new int[] {1, 2}, 4, 5L, null);
        conductor.start(slow.id(), List.of(slow.pass()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!holding.get()) {
            assertThat(System.nanoTime()).as("the step started").isLessThan(deadline);
            Thread.sleep(1);
        }
        int tombstones = w0.snapshot().tombstones();
        broker.fromConductor(ToyConductor.W0, WorkerMessage.of(new RemoveRequest("never-started")));
        EngineSnapshot during = w0.loop.ask(s -> s.engine().snapshotNow()).block(Duration.ofSeconds(5));

        assertThat(holding.get()).as("the step still runs").isTrue();
        assertThat(during.tombstones()).as("the removal was handled meanwhile").isEqualTo(tombstones + 1);
        assertThat(during.requests()).isEqualTo(1);
        hold.countDown();
        hold = null;
        conductor.pumpUntilRemoved(TIMEOUT);
        assertThat(conductor.runs.get("slow").firsts("out", 0)).isEqualTo(slow.expected());
    }
}
