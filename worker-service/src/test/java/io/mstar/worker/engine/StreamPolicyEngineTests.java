package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.testing.Seeds;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.streaming.ChunkPolicy;
import io.mstar.worker.streaming.FixedChunkPolicy;
import io.mstar.worker.streaming.LeftContextChunkPolicy;
import io.mstar.worker.streaming.SlidingWindowChunkPolicy;

/**
 * Chunk policies through the engine, on a tiny model of two partitions on one worker: {@code gen} (partition
 * {@code default}) streams int32 tokens on {@code tok} into {@code take} (partition {@code sink}), which emits its
 * chunk unchanged as {@code chunk}. The test plays the producer: it sends the streaming edges itself, from the
 * conductor's store (reads that land at once) or from {@link StallingTensorServer}s (reads that land when the test
 * says), so landing order is the test's. Every test ends with no request, tensor, device byte, arena slot or read
 * left on the worker, and no release of a tensor that was not held.
 */
class StreamPolicyEngineTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final String MODEL = "stream-echo";
    private static final String SINK = "sink";
    private static final String WINDOW_WALK = "window";

    @TempDir
    Path dir;

    private InProcessBroker broker;
    private TestConductor data;
    private TestWorker worker;
    private List<WorkerGraph> graphs;
    private int sinkGraph;
    private final List<StallingTensorServer> stalled = new ArrayList<>();
    private final Map<String, Seen> seen = new HashMap<>();
    private long uuids = 7_000;

    /** What the conductor received for one request. */
    private static final class Seen {
        final List<List<Integer>> chunks = new ArrayList<>();
        final List<WorkerGraphsDone> reports = new ArrayList<>();
        final List<String> failures = new ArrayList<>();
        boolean readsDone;
    }

    private void start(ChunkPolicy policy) {
        GraphNode gen = new GraphNode("gen", Set.of("seed"), List.of(
                GraphEdge.builder("take", "tok").isStreaming(true).targetPartition(SINK).build()), false);
        GraphNode take = new GraphNode("take", Set.of("tok"), List.of(
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, "chunk").outputModality("text").build()), true);
        ModelGraph model = new ModelGraph(MODEL, List.of(new GraphWalk("produce", gen), new GraphWalk(WINDOW_WALK, take)),
                Map.of(ModelGraph.DEFAULT_PARTITION, List.of("produce"), SINK, List.of(WINDOW_WALK)));
        graphs = WorkerGraphSplit.split(List.of(new ModelConfig(MODEL, Optional.empty(), List.of(
                new NodeGroupConfig(List.of("gen"), List.of(0), 1, List.of()),
                new NodeGroupConfig(List.of("take"), List.of(0), 1, List.of())))), Map.of(MODEL, model));
        sinkGraph = graphs.stream().filter(g -> g.walk().equals(WINDOW_WALK)).findFirst().orElseThrow().id();
        ModelKernels kernels = new ModelKernels(MODEL, Map.of(
                "gen", (device, batch) -> batch.stream().map(call -> NodeResult.of(Map.of("tok",
                        Int32Tensors.write(device, Int32Tensors.read(device, call.input("seed")))))).toList(),
                "take", (device, batch) -> batch.stream().map(call -> NodeResult.of(Map.of("chunk",
                        Int32Tensors.write(device, Int32Tensors.read(device, call.input("tok")))))).toList()),
                Map.of("tok", policy));
        broker = new InProcessBroker();
        data = new TestConductor(dir);
        worker = new TestWorker(0, dir, broker, new KernelCatalog(List.of(kernels)), graphs);
    }

    @AfterEach
    void everythingIsFreedExactlyOnce() {
        try {
            stalled.forEach(StallingTensorServer::release);
            if (worker != null) {
                EngineSnapshot s = worker.snapshot();
                assertThat(s.requests()).as("requests").isZero();
                assertThat(s.tensors().liveTensors()).as("live tensors").isZero();
                assertThat(s.readsInFlight()).as("reads in flight").isZero();
                assertThat(worker.deviceBytes()).as("device bytes").isZero();
                assertThat(worker.data.arenaOccupancy().liveSlots()).as("arena slots").isZero();
                assertThat(s.tensors().errors().values().stream().mapToLong(Long::longValue).sum())
                        .as("tensor store errors %s", s.tensors().errors()).isZero();
                assertThat(engine(WorkerEngine::unknownReleases)).as("releases of tensors not held").isZero();
                assertThat(data.store.liveTensorCount()).as("conductor tensors").isZero();
                assertThat(data.device.stats().bytesInUse()).as("conductor device bytes").isZero();
            }
        } finally {
            stalled.forEach(StallingTensorServer::close);
            if (worker != null) {
                worker.close();
                data.close();
            }
        }
    }

    // ---------------------------------------------------------------- tests

    @Test
    void slidingWindowChunksFollowTheStreamWhateverOrderReadsLandIn() {
        start(new SlidingWindowChunkPolicy(3, 1));
        long seed = Seeds.of("StreamPolicyEngineTests");
        Random random = new Random(seed);
        String id = "r-window";
        newSinkRequest(id);
        List<StallingTensorServer> tokens = new ArrayList<>();
        for (int v = 1; v <= 6; v++) {
            StallingTensorServer token = stalledToken(v);
            tokens.add(token);
            send(id, token.descriptor(uuids++, "conductor"));
        }
        producerDone(id);
        awaitReadsInFlight(6);

        List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5));
        Collections.shuffle(order, random);
        boolean[] landed = new boolean[6];
        for (int k = 0; k < order.size(); k++) {
            tokens.get(order.get(k)).release();
            landed[order.get(k)] = true;
            awaitReadsInFlight(5 - k);
            int prefix = 0;
            while (prefix < 6 && landed[prefix]) {
                prefix++;
            }
            int expected = Math.max(0, prefix - 2); // a window of 3, then one chunk per further landed token
            pumpUntil(() -> seen(id).reports.size() >= expected);
            assertThat(seen(id).chunks).as("seed %d: chunks after landing %s", seed, order.subList(0, k + 1))
                    .hasSize(expected);
        }

        Seen s = seen(id);
        assertThat(s.chunks).as("seed %d", seed).containsExactly(List.of(1, 2, 3), List.of(2, 3, 4), List.of(3, 4, 5),
                List.of(4, 5, 6));
        assertThat(s.reports).extracting(r -> r.streamTokensConsumed().get("tok")).containsExactly(3, 4, 5, 6);
        assertThat(s.reports).extracting(WorkerGraphsDone::partitionDone).containsExactly(false, false, false, true);
        assertThat(s.reports).extracting(WorkerGraphsDone::partitionName).containsOnly(SINK);
        awaitLiveTensors(0); // every token released once the final chunk was cut, outputs acknowledged
        teardown(id);
    }

    @Test
    void leftContextChunksRepeatTheirContextAndHoldItUntilNoLaterChunkNeedsIt() {
        start(new LeftContextChunkPolicy(2, 1));
        String id = "r-left";
        newSinkRequest(id);
        StallingTensorServer first = stalledToken(1);
        StallingTensorServer fourth = stalledToken(4);
        send(id, first.descriptor(uuids++, "conductor"));
        send(id, data.input(id, new int[] {2}));
        send(id, data.input(id, new int[] {3}));
        send(id, fourth.descriptor(uuids++, "conductor"));
        send(id, data.input(id, new int[] {5}));
        awaitReadsInFlight(2);
        pumpFor(Duration.ofMillis(300));
        assertThat(seen(id).chunks).as("nothing before the first token landed").isEmpty();
        awaitLiveTensors(3);

        first.release();
        pumpUntil(() -> seen(id).reports.size() == 1);
        assertThat(seen(id).chunks).containsExactly(List.of(1, 2));
        // token 1 was released with the chunk; 2 stays as the next chunk's context, 3 and 5 wait for 4
        awaitLiveTensors(3);

        fourth.release();
        pumpUntil(() -> seen(id).reports.size() == 2);
        assertThat(seen(id).chunks).containsExactly(List.of(1, 2), List.of(2, 3, 4));
        awaitLiveTensors(2); // 4 (context of the next chunk) and 5

        producerDone(id);
        pumpUntil(() -> seen(id).reports.size() == 3);
        Seen s = seen(id);
        assertThat(s.chunks).containsExactly(List.of(1, 2), List.of(2, 3, 4), List.of(4, 5));
        assertThat(s.reports).extracting(r -> r.streamTokensConsumed().get("tok")).containsExactly(2, 4, 5);
        assertThat(s.reports).extracting(WorkerGraphsDone::partitionDone).containsExactly(false, false, true);
        awaitLiveTensors(0);
        pumpFor(Duration.ofMillis(200));
        assertThat(s.reports).as("nothing is cut after the final chunk").hasSize(3);
        teardown(id);
    }

    @Test
    void aRequestRemovedMidStreamReleasesItsContextAndDropsReadsThatLandLater() {
        start(new SlidingWindowChunkPolicy(3, 1));
        String id = "r-removed";
        newSinkRequest(id);
        for (int v = 1; v <= 3; v++) {
            send(id, data.input(id, new int[] {v}));
        }
        StallingTensorServer fourth = stalledToken(4);
        StallingTensorServer fifth = stalledToken(5);
        send(id, fourth.descriptor(uuids++, "conductor"));
        send(id, fifth.descriptor(uuids++, "conductor"));
        pumpUntil(() -> seen(id).reports.size() == 1);
        assertThat(seen(id).chunks).containsExactly(List.of(1, 2, 3));
        awaitLiveTensors(2); // 2 and 3, the next window's context

        broker.fromConductor(worker.id, WorkerMessage.of(new RemoveRequest(id)));
        await().atMost(TIMEOUT).until(() -> worker.snapshot().requests() == 0);
        assertThat(worker.snapshot().tensors().liveTensors()).as("the held context was released on removal").isZero();
        assertThat(engine(WorkerEngine::forgottenStreamReads)).as("tokens 4 and 5 had not landed").isEqualTo(2);

        long before = engine(WorkerEngine::landedAfterRemoval);
        fourth.release();
        fifth.release();
        await().atMost(TIMEOUT).until(() -> engine(WorkerEngine::landedAfterRemoval) == before + 2);
        assertThat(worker.snapshot().tensors().liveTensors()).as("late landings are not stored").isZero();
        assertThat(worker.deviceBytes()).isZero();
        data.removeRequest(id);
    }

    @Test
    void aTokenAfterTheFinalChunkFailsOnlyItsRequest() {
        start(new FixedChunkPolicy(2));
        String done = "r-done";
        String other = "r-other";
        newSinkRequest(done);
        newSinkRequest(other);
        send(done, data.input(done, new int[] {1}));
        send(done, data.input(done, new int[] {2}));
        send(other, data.input(other, new int[] {7}));
        pumpUntil(() -> seen(done).reports.size() == 1);
        producerDone(done);
        pumpUntil(() -> seen(done).reports.size() == 2);
        assertThat(seen(done).chunks).as("everything was delivered: the final chunk is empty")
                .containsExactly(List.of(1, 2), List.of());
        assertThat(seen(done).reports).extracting(WorkerGraphsDone::partitionDone).containsExactly(false, true);

        send(done, data.input(done, new int[] {3}));
        pumpUntil(() -> !seen(done).failures.isEmpty());
        assertThat(seen(done).failures).singleElement().asString().contains("REGISTERED_AFTER_FINAL");

        producerDone(other);
        pumpUntil(() -> seen(other).reports.size() == 1);
        assertThat(seen(other).failures).isEmpty();
        assertThat(seen(other).chunks).containsExactly(List.of(7));
        assertThat(seen(other).reports.get(0).partitionDone()).isTrue();
        awaitLiveTensors(0);
        teardown(done, other);
    }

    // ---------------------------------------------------------------- driving

    private CurrentForwardPassInfo sinkInfo(String id) {
        return new CurrentForwardPassInfo(id, WINDOW_WALK, false, 0, 0, 8, null, null, null, SINK, null, null);
    }

    private void newSinkRequest(String id) {
        Map<Integer, List<String>> placement = new HashMap<>();
        graphs.forEach(g -> placement.put(g.id(), List.of(worker.id.value())));
        broker.fromConductor(worker.id, WorkerMessage.of(new NewRequest(id, List.of(sinkGraph), placement, List.of(),
                sinkInfo(id))));
    }

    private StallingTensorServer stalledToken(int value) {
        StallingTensorServer token = new StallingTensorServer(new int[] {value});
        stalled.add(token);
        return token;
    }

    private void send(String id, TensorPointerInfo token) {
        GraphEdge edge = GraphEdge.builder("take", "tok").isStreaming(true).targetPartition(SINK)
                .tensorInfo(List.of(token)).build();
        broker.fromConductor(worker.id, WorkerMessage.of(new InputSignals(id, List.of(edge), sinkInfo(id), SINK, null)));
    }

    private void producerDone(String id) {
        broker.fromConductor(worker.id, WorkerMessage.of(new InputSignals(id, List.of(), sinkInfo(id), SINK,
                Set.of(ModelGraph.DEFAULT_PARTITION))));
    }

    /** Drain, ReadsDone, remove, as the conductor ends requests; then the conductor frees their inputs. */
    private void teardown(String... ids) {
        for (String id : ids) {
            broker.fromConductor(worker.id, WorkerMessage.of(new DrainRequest(id)));
        }
        pumpUntil(() -> java.util.Arrays.stream(ids).allMatch(id -> seen(id).readsDone));
        for (String id : ids) {
            broker.fromConductor(worker.id, WorkerMessage.of(new RemoveRequest(id)));
        }
        await().atMost(TIMEOUT).until(() -> worker.snapshot().requests() == 0);
        for (String id : ids) {
            data.removeRequest(id);
        }
    }

    private Seen seen(String id) {
        return seen.computeIfAbsent(id, k -> new Seen());
    }

    private <T> T engine(Function<WorkerEngine, T> query) {
        return worker.loop.ask(s -> query.apply(s.engine())).block(Duration.ofSeconds(5));
    }

    private void awaitReadsInFlight(int n) {
        await().atMost(TIMEOUT).until(() -> worker.snapshot().readsInFlight() == n);
    }

    /** Live tensors on the worker, pumping (and so acknowledging emitted chunks) while waiting. */
    private void awaitLiveTensors(int n) {
        pumpUntil(() -> worker.snapshot().tensors().liveTensors() == n);
    }

    private void pumpFor(Duration duration) {
        long until = System.nanoTime() + duration.toNanos();
        pumpUntil(() -> System.nanoTime() >= until);
    }

    /** Takes the conductor's messages (reading and acknowledging every chunk) until {@code done} holds. */
    private void pumpUntil(java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("timed out; seen %s", seen.keySet()).isLessThan(deadline);
            ConductorMessage m;
            try {
                m = broker.conductor.poll(20, java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (m != null) {
                take(m);
            }
        }
    }

    private void take(ConductorMessage m) {
        if (m.body() instanceof ResultTensors result) {
            TensorPointerInfo d = result.graphEdge().tensorInfo().get(0);
            List<Integer> values = new ArrayList<>();
            try {
                for (int v : data.outputInts(result)) {
                    values.add(v);
                }
            } catch (Exception e) {
                throw new AssertionError("reading chunk " + d.uuid() + " failed", e);
            }
            seen(result.requestId()).chunks.add(values);
            TestConductorLoop.acknowledge(broker, result);
        } else if (m.body() instanceof WorkerGraphsDone done) {
            seen(done.requestId()).reports.add(done);
        } else if (m.body() instanceof FailRequests failed) {
            failed.errors().forEach((request, error) -> seen(request).failures.add(error));
        } else if (m.body() instanceof ReadsDone readsDone) {
            seen(readsDone.requestId()).readsDone = true;
        }
    }
}
