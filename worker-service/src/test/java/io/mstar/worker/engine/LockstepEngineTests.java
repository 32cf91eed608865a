package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.EntityId;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.wire.MessageSource;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.TPNoSpeculation;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;

/**
 * Tensor-parallel lockstep in the engine (docs/tensor-parallelism.md#the-protocol): the toy KV model's {@code lm} on a
 * group of two workers, worker 0 leading. Each rank's kernel all-gathers a hash of its batch through a real
 * {@link SharedMemoryCollective} before it runs, so a follower that ran anything but the leader's batch, or ran it
 * late, fails the step (the hashes differ, or the collective times out). Only the leader's outputs reach the client.
 */
class LockstepEngineTests {

    static final String MODEL = KvCacheEngineTests.MODEL;
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final Duration COLLECTIVE_TIMEOUT = Duration.ofSeconds(10);
    /** The engines' lockstep timeout: short, for the tests of a leader that is gone. */
    static final Duration LOCKSTEP_TIMEOUT = Duration.ofSeconds(3);

    @TempDir
    Path dir;

    InProcessBroker broker;
    TestConductor data;
    ToyConductor conductor;
    /** Rank 0, 1, ...: worker 0 leads. */
    List<TestWorker> workers;
    TestWorker leader;
    TestWorker follower;
    List<LockstepLm> kernels;

    /** The group's size (a subclass runs every test on three). */
    int ranks() {
        return 2;
    }

    /** Each rank's KV pages of 4 tokens (a subclass runs every test short of pages). */
    int kvPages() {
        return 64;
    }

    @BeforeEach
    void start() {
        List<Integer> ordinals = java.util.stream.IntStream.range(0, ranks()).boxed().toList();
        DeploymentConfig deployment = DeploymentConfig.parse("""
                models:
                  - name: toy_lm
                    kv_cache:
                      page_size: 4
                      max_num_pages: %d
                    node_groups:
                      - node_names: [lm]
                        workers: %s
                        tp_size: %d
                """.formatted(kvPages(), ordinals, ranks()), "test");
        ModelGraph model = KvCacheEngineTests.toyLm();
        List<WorkerGraph> graphs = WorkerGraphSplit.split(deployment, Map.of(MODEL, model));
        broker = new InProcessBroker();
        data = new TestConductor(dir);
        conductor = new ToyConductor(broker, data, graphs,
                g -> ordinals.stream().map(w -> EntityId.worker(w).value()).toList());
        Path file = dir.resolve("lockstep.collective");
        kernels = ordinals.stream().map(r -> new LockstepLm(file, r, ranks())).toList();
        kernels.forEach(k -> k.checked = checksLockstep());
        Map<String, io.mstar.deployment.KvCacheConfig> kv = TestWorker.kvCachesOf(deployment);
        workers = ordinals.stream().map(r -> new TestWorker(r, dir, broker, d -> catalog(kernels.get(r)), graphs,
                () -> new HostDevice(HostDevice.NAME, 64 << 20), kv,
                engine())).toList();
        leader = workers.get(0);
        follower = workers.get(1);
    }

    /** The engines' settings (a subclass turns speculation on). */
    EngineProperties engine() {
        return EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF)
                .withLockstepTimeout(LOCKSTEP_TIMEOUT);
    }

    boolean speculates() {
        return engine().speculation() == EngineProperties.Speculation.ON;
    }

    /** Whether the kernels check each batch through the collective (every test below but one). */
    boolean checksLockstep() {
        return true;
    }

    private static KernelCatalog catalog(LockstepLm lm) {
        return new KernelCatalog(List.of(new ModelKernels(MODEL, Map.of(KvCacheEngineTests.LM, lm))));
    }

    @AfterEach
    void everythingIsFreed() {
        try {
            for (TestWorker w : workers) {
                w.assertAtBaseline(w.assertNoKvPagesHeld().poolBytes());
            }
            data.assertAtBaseline();
        } finally {
            broker.close();
            workers.forEach(TestWorker::close);
            kernels.forEach(LockstepLm::close);
            data.close();
        }
    }

    @Test
    void theFollowerRunsExactlyTheLeadersBatchesAndOnlyTheLeaderEmits() throws Exception {
        SamplingConfig topK = new SamplingConfig(null, 1.0, 5, 1.0, false, 1.0, 0L);
        List<KvCacheEngineTests.Req> reqs = List.of(
                new KvCacheEngineTests.Req("a", new int[] {1, 2, 3}, 9, 11L, null),
                new KvCacheEngineTests.Req("b", new int[] {4}, 12, 12L, topK),
                new KvCacheEngineTests.Req("c", new int[] {5, 6}, 6, 13L, null),
                new KvCacheEngineTests.Req("d", new int[] {7, 8, 9, 10}, 14, 14L, topK),
                new KvCacheEngineTests.Req("e", new int[] {2}, 3, 15L, null),
                new KvCacheEngineTests.Req("f", new int[] {3, 3}, 11, 16L, topK));
        reqs.forEach(r -> conductor.start(r.id(), List.of(pass(r))));
        conductor.pumpUntilRemoved(TIMEOUT);
        awaitNoRequestsOnEitherWorker();
        for (KvCacheEngineTests.Req r : reqs) {
            ToyConductor.Run run = conductor.runs.get(r.id());
            assertThat(run.failure).as("request %s failed", r.id()).isNull();
            assertThat(run.firsts("out", 0)).as("tokens of %s, each once", r.id()).isEqualTo(r.expected());
            assertThat(run.reports).as("reports of %s", r.id()).extracting(WorkerGraphsDone::isFirstTpRank)
                    .containsOnlyOnce(true).hasSize(ranks());
        }
        assertFollowersRanTheLeadersBatches("");
        assertThat(kernels.get(0).batches()).isNotEmpty();
        List<ScheduleTPNode> schedules = broker.sentTo(EntityId.worker(1).value(), ScheduleTPNode.class);
        if (speculates()) {
            assertOneDecisionPerLeadStep(schedules);
        } else {
            assertThat(schedules).extracting(ScheduleTPNode::requestIds).isEqualTo(kernels.get(0).batches());
        }
        assertThat(schedules).extracting(ScheduleTPNode::specSeq)
                .isEqualTo(java.util.stream.LongStream.range(0, schedules.size()).boxed().toList());
        assertThat(broker.sentTo(EntityId.worker(0).value(), ScheduleTPNode.class)).isEmpty();
        assertThat(relaysTo(1)).as("one relayed removal per request").hasSize(reqs.size())
                .allMatch(r -> r.afterTpSeq() >= 0 && r.afterTpSeq() < schedules.size());
    }

    /**
     * Seeded: requests start at random moments, some are aborted at random moments, every rank's steps take random
     * times, every message takes a random time (up to 1 ms, in order per sender, addressee and record key, as Kafka
     * keeps it), and the leader's batches reach a follower late at random (held, then handed over in order). The follower still runs exactly the leader's batch sequence, every request that was not aborted gets
     * exactly its tokens, and both workers end at baseline.
     */
    @Test
    void randomDelaysAndAbortsKeepTheRanksInLockstep() throws Exception {
        long seed = Seeds.of("LockstepEngineTests.randomDelaysAndAbortsKeepTheRanksInLockstep");
        Random random = new Random(seed);
        for (int r = 0; r < ranks(); r++) {
            kernels.get(r).delays = new Random(seed + r); // every rank's steps take their own random time
        }
        broker.jitter(new Random(seed * 31 + 7), Duration.ofMillis(1)); // and every message its own, in Kafka's order
        List<KvCacheEngineTests.Req> reqs = new ArrayList<>();
        Map<String, Long> abortAt = new LinkedHashMap<>();
        Map<String, Long> startAt = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            int[] prompt = random.ints(1 + random.nextInt(4), 0, KvCacheEngineTests.VOCAB).toArray();
            int len = prompt.length + 1 + random.nextInt(12);
            KvCacheEngineTests.Req r = new KvCacheEngineTests.Req("r" + i, prompt, len, random.nextLong(), null);
            reqs.add(r);
            startAt.put(r.id(), t0 + random.nextInt(40_000_000));
            if (random.nextInt(3) == 0) {
                abortAt.put(r.id(), startAt.get(r.id()) + random.nextInt(20_000_000));
            }
        }
        List<Long> holdToggles = new ArrayList<>();
        for (long t = t0; t < t0 + 80_000_000L; t += 2_000_000 + random.nextInt(8_000_000)) {
            holdToggles.add(t);
        }
        String followerId = EntityId.worker(1).value();
        AtomicReference<Boolean> holding = new AtomicReference<>(false);
        conductor.pumpUntil(() -> {
            long now = System.nanoTime();
            startAt.entrySet().removeIf(e -> {
                if (now >= e.getValue()) {
                    reqs.stream().filter(r -> r.id().equals(e.getKey())).findFirst()
                            .ifPresent(r -> conductor.start(r.id(), List.of(pass(r))));
                    return true;
                }
                return false;
            });
            abortAt.entrySet().removeIf(e -> {
                if (now >= e.getValue() && conductor.runs.containsKey(e.getKey())) {
                    conductor.abort(e.getKey());
                    return true;
                }
                return false;
            });
            while (!holdToggles.isEmpty() && now >= holdToggles.get(0)) {
                holdToggles.remove(0);
                if (holding.get()) {
                    broker.release();
                } else {
                    broker.hold(s -> s.to().equals(followerId) && s.message() instanceof WorkerMessage m
                            && m.body() instanceof ScheduleTPNode);
                }
                holding.set(!holding.get());
            }
            if (holdToggles.isEmpty() && holding.get()) {
                broker.release();
                holding.set(false);
            }
            return startAt.isEmpty() && holdToggles.isEmpty()
                    && conductor.runs.values().stream().allMatch(r -> r.removed);
        }, TIMEOUT);
        awaitNoRequestsOnEitherWorker();
        assertFollowersRanTheLeadersBatches("seed " + seed);
        for (KvCacheEngineTests.Req r : reqs) {
            ToyConductor.Run run = conductor.runs.get(r.id());
            assertThat(run.failure).as("request %s failed (seed %d)", r.id(), seed).isNull();
            List<Integer> got = run.firsts("out", 0);
            List<Integer> expected = r.expected();
            assertThat(got).as("tokens of %s, a prefix when aborted (seed %d)", r.id(), seed)
                    .isEqualTo(expected.subList(0, Math.min(got.size(), expected.size())));
        }
        int broadcasts = broker.sentTo(followerId, ScheduleTPNode.class).size();
        for (RemoveRequest relay : relaysTo(1)) {
            assertThat(relay.afterTpSeq()).as("a relay names a batch that was broadcast").isLessThan(broadcasts);
        }
        if (speculates()) {
            assertOneDecisionPerLeadStep(broker.sentTo(followerId, ScheduleTPNode.class));
        }
    }

    /**
     * A leader whose kernel never waits for its follower runs a request to its end while its batches are still on the
     * way to the follower; the request is aborted then. The relayed removal overtakes those batches (it has another
     * record key), so the follower parks it until it has run the last batch that named the request.
     */
    @org.junit.jupiter.api.Nested
    class WhenTheLeaderRunsAhead {

        @Test
        void aRelayedRemovalWaitsForTheLastBatchThatNamedTheRequest() throws Exception {
            kernels.forEach(k -> k.checked = false);
            String followerId = EntityId.worker(1).value();
            broker.hold(s -> s.to().equals(followerId) && s.message() instanceof WorkerMessage m
                    && m.body() instanceof ScheduleTPNode);
            KvCacheEngineTests.Req r = new KvCacheEngineTests.Req("a", new int[] {1, 2}, 8, 5L, null);
            conductor.start(r.id(), List.of(pass(r)));
            conductor.pumpUntil(() -> kernels.get(0).batches().size() == r.expected().size(), TIMEOUT);
            conductor.abort(r.id());
            conductor.pumpUntil(() -> !relaysTo(1).isEmpty(), TIMEOUT);
            assertThat(kernels.get(1).batches()).as("the follower ran nothing yet").isEmpty();
            assertThat(relaysTo(1).get(0).afterTpSeq()).isEqualTo(r.expected().size() - 1);
            broker.release();
            awaitNoRequestsOnEitherWorker();
            assertThat(kernels.get(1).batches()).as("the follower's batches").isEqualTo(kernels.get(0).batches());
            assertThat(conductor.runs.get(r.id()).firsts("out", 0)).isEqualTo(r.expected());
        }
    }

    /**
     * Bounded waits on a follower whose leader went quiet (docs/tensor-parallelism.md#a-lost-rank): a conductor removal
     * the leader never relays is applied after the lockstep timeout, and a batch naming a request that never comes is
     * dropped after it, so the FIFO serves the next batch.
     */
    @org.junit.jupiter.api.Nested
    class WhenTheLeaderGoesQuiet {

        @Test
        void aConductorRemovalThatIsNeverRelayedIsAppliedAfterTheTimeout() throws Exception {
            String followerId = EntityId.worker(1).value();
            KvCacheEngineTests.Req r = new KvCacheEngineTests.Req("a", new int[] {1, 2}, 40, 5L, null);
            conductor.start(r.id(), List.of(pass(r)));
            conductor.pumpUntil(() -> kernels.get(1).batches().size() >= 2, TIMEOUT);
            // from now on nothing of the leader's reaches the follower: no batch, no relay
            broker.hold(s -> s.to().equals(followerId) && s.from().equals(EntityId.worker(0).value()));
            conductor.abort(r.id());
            long start = System.nanoTime();
            conductor.pumpUntil(() -> follower.requests() == 0 && leader.requests() == 0, TIMEOUT);
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(seconds).as("removed on the conductor's word after the timeout")
                    .isGreaterThanOrEqualTo(LOCKSTEP_TIMEOUT.toMillis() / 1000.0 - 0.5);
            broker.release(); // late batches and the relay find the request gone
            follower.loop.ask(s -> s.engine().snapshotNow()).block(TIMEOUT);
            assertThat(follower.requests()).isZero();
        }

        @Test
        void aBatchNamingARequestThatNeverComesIsDroppedAndTheNextOneRuns() throws Exception {
            broker.fromConductor(EntityId.worker(1), WorkerMessage.of(
                    new ScheduleTPNode(KvCacheEngineTests.LM, KvCacheEngineTests.WALK, List.of("ghost"), 1_000)));
            KvCacheEngineTests.Req r = new KvCacheEngineTests.Req("real", new int[] {3}, 6, 9L, null);
            conductor.start(r.id(), List.of(pass(r)));
            conductor.pumpUntilRemoved(TIMEOUT);
            awaitNoRequestsOnEitherWorker();
            assertThat(conductor.runs.get(r.id()).failure).isNull();
            assertThat(conductor.runs.get(r.id()).firsts("out", 0)).isEqualTo(r.expected());
            assertThat(kernels.get(1).batches()).isEqualTo(kernels.get(0).batches());
        }
    }

    /** The conductor is done with its requests before the workers are: the leader relays, the followers follow. */
    void awaitNoRequestsOnEitherWorker() throws Exception {
        conductor.pumpUntil(() -> workers.stream().allMatch(w -> w.requests() == 0), TIMEOUT);
    }

    void assertFollowersRanTheLeadersBatches(String why) {
        for (int r = 1; r < ranks(); r++) {
            assertThat(kernels.get(r).batches()).as("rank %d's batches %s", r, why).isEqualTo(kernels.get(0).batches());
        }
    }

    /**
     * With speculation on: after every lead step that ran, exactly one of a speculative batch from it and a
     * TPNoSpeculation for it. No step fails here, so the leader voids none and every broadcast batch ran (one whose
     * calls all finished in the step before still runs, empty).
     */
    void assertOneDecisionPerLeadStep(List<ScheduleTPNode> schedules) {
        Map<Long, Integer> decisions = new HashMap<>();
        schedules.stream().filter(ScheduleTPNode::speculative)
                .forEach(s -> decisions.merge(s.specFromSeq(), 1, Integer::sum));
        broker.sentTo(EntityId.worker(1).value(), TPNoSpeculation.class)
                .forEach(n -> decisions.merge(n.specFromSeq(), 1, Integer::sum));
        assertThat(schedules).as("some batches were speculated").anyMatch(ScheduleTPNode::speculative);
        assertThat(decisions).as("one decision after each lead step, by seq")
                .isEqualTo(schedules.stream().collect(Collectors.toMap(ScheduleTPNode::specSeq,
                        s -> 1)));
    }

    private List<RemoveRequest> relaysTo(int worker) {
        return broker.sentTo(EntityId.worker(worker).value(), RemoveRequest.class).stream()
                .filter(r -> r.source() == MessageSource.TP_RANK_0).toList();
    }

    ToyConductor.Pass pass(KvCacheEngineTests.Req r) {
        ToyConductor.Pass one = r.pass();
        List<ToyConductor.Input> inputs = new ArrayList<>();
        for (ToyConductor.Input in : one.inputs()) {
            for (TestWorker w : workers) {
                inputs.add(new ToyConductor.Input(w.id, in.node(), in.signal(), in.values()));
            }
        }
        return new ToyConductor.Pass(one.walk(), inputs, one.stepMetadata(), one.sampling(), one.seed());
    }

    /**
     * The toy lm with a lockstep check: before each batch the ranks all-gather a hash of the batch's request ids and
     * fail the step unless they agree. Records every batch it ran.
     */
    static final class LockstepLm implements KvCacheKernel {

        private final KvCacheEngineTests.ToyLm lm = new KvCacheEngineTests.ToyLm();
        private final Path file;
        private final int rank;
        private final int size;
        private final List<List<String>> batches = Collections.synchronizedList(new ArrayList<>());
        private volatile SharedMemoryCollective collective;
        /** False: no collective, so a leader runs ahead of its follower (a node whose kernel never waits for peers). */
        volatile boolean checked = true;
        /** Seeded random step lengths (up to 2 ms before the step), or none. */
        volatile Random delays;

        LockstepLm(Path file, int rank, int size) {
            this.file = file;
            this.rank = rank;
            this.size = size;
        }

        List<List<String>> batches() {
            synchronized (batches) {
                return List.copyOf(batches);
            }
        }

        @Override
        public boolean recordsFeeds() {
            return lm.recordsFeeds();
        }

        @Override
        public long bytesPerToken() {
            return lm.bytesPerToken();
        }

        @Override
        public int tokensToAppend(NodeCall call) {
            return lm.tokensToAppend(call);
        }

        @Override
        public List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> steps) {
            List<String> ids = batch.stream().map(NodeCall::requestId).toList();
            batches.add(ids);
            Random delay = delays;
            if (delay != null) {
                java.util.concurrent.locks.LockSupport.parkNanos(delay.nextInt(2_000_000));
            }
            if (!checked) {
                return lm.forward(device, batch, steps);
            }
            if (collective == null) {
                collective = SharedMemoryCollective.join(new SharedMemoryCollectiveSettings(file, rank, size,
                        SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES, COLLECTIVE_TIMEOUT));
            }
            DeviceBuffer in = device.allocate(Long.BYTES);
            DeviceBuffer out = device.allocate((long) size * Long.BYTES);
            try {
                ByteBuffer hash = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
                hash.putLong(0, ids.hashCode() * 31L + batches.size());
                device.copyFromHost(hash, in, 0);
                collective.allGather(in, 0, out, 0, Long.BYTES);
                ByteBuffer all = ByteBuffer.allocate(size * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
                device.copyToHost(out, 0, all);
                for (int r = 1; r < size; r++) {
                    if (all.getLong(0) != all.getLong(r * Long.BYTES)) {
                        throw new IllegalStateException("rank " + rank + " ran batch " + batches.size() + " " + ids
                                + ", which is not every peer's");
                    }
                }
            } finally {
                device.free(in);
                device.free(out);
            }
            return lm.forward(device, batch, steps);
        }

        void close() {
            if (collective != null) {
                collective.close();
            }
        }
    }
}
