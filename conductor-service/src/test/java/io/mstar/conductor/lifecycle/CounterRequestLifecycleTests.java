package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.RequestOutcome;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerGraphsDone;

/**
 * A counter request end to end on the conductor, with this test playing worker-0 and worker-1 message for message
 * (docs/request-flow.md) and serving their outputs from a real tensor server the conductor reads.
 */
class CounterRequestLifecycleTests {

    private static final EntityId W0 = EntityId.worker(0);
    private static final EntityId W1 = EntityId.worker(1);

    private ConductorHarness h;

    @BeforeEach
    void start() throws Exception {
        h = ConductorHarness.counter();
        h.setUpWorkers();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    @Test
    void inputsOverTheInlineSizeAreOnlyServedForTheWorkersToRead() throws Exception {
        try (ConductorHarness small = new ConductorHarness(DeploymentConfig.loadDefault(), Duration.ofSeconds(30),
                Duration.ofSeconds(30), 8)) {
            small.setUpWorkers();
            small.submit(ConductorHarness.counterRequest("r-big", 5, Map.of(), 1, 2, 3), new CopyOnWriteArrayList<>());
            small.awaitSent(NewRequest.class, 3, s -> true);
            NewRequest w0Default = (NewRequest) small.sentOf(NewRequest.class, s -> s.worker().equals(W0)
                    && ((NewRequest) s.body()).requestInfo().partitionName().equals("default")).get(0).body();
            assertThat(w0Default.initialInputs()).isNotEmpty();
            assertThat(w0Default.inline()).as("12 bytes of tokens over a limit of 8").isFalse();
        }
    }

    @Test
    void aCounterRequestRunsPrefillDecodeAndDetokAndDeliversEveryOutputInOrderThenTearsDown() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-1", 5, Map.of(), 1, 2, 3), chunks);
        int prefill0 = h.wg("prefill", "embed");
        int prefill1 = h.wg("prefill", "count");
        int decode = h.wg("decode", "step");
        int chunk = h.wg("chunk", "detok");

        // NewRequest: worker-0 gets tokens for embed and offset, worker-1 nothing; detok's NewRequest has no inputs.
        h.awaitSent(NewRequest.class, 3, s -> true);
        List<NewRequest> news = h.sentOf(NewRequest.class, s -> true).stream().map(s -> (NewRequest) s.body()).toList();
        NewRequest w0Default = (NewRequest) h.sentOf(NewRequest.class, s -> s.worker().equals(W0)
                && ((NewRequest) s.body()).requestInfo().partitionName().equals("default")).get(0).body();
        assertThat(w0Default.initialInputs()).extracting(e -> e.nextNode()).containsExactly("embed", "offset");
        assertThat(w0Default.requestInfo().graphWalk()).isEqualTo("prefill");
        assertThat(w0Default.partitionWorkerGraphIds()).containsExactly(prefill0, prefill1, decode);
        assertThat(w0Default.initialInputs().get(0).tensorInfo().get(0).sourceEntity()).isEqualTo("conductor");
        assertThat(news).filteredOn(n -> n.requestInfo().partitionName().equals("detok"))
                .singleElement().satisfies(n -> {
                    assertThat(n.initialInputs()).isEmpty();
                    assertThat(n.partitionWorkerGraphIds()).containsExactly(chunk);
                });
        assertThat(h.liveInputs()).isEqualTo(1);
        // the conductor serves its input tensor: a worker reading the descriptor gets the client's tokens
        TensorPointerInfo tokens = w0Default.initialInputs().get(0).tensorInfo().get(0);
        java.nio.ByteBuffer read = java.nio.ByteBuffer.allocate((int) tokens.nbytes());
        h.reader.read("peer-read", tokens, read).join();
        read.order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(List.of(read.getInt(0), read.getInt(4), read.getInt(8))).containsExactly(1, 2, 3);
        assertThat(tokens.dtype()).isEqualTo("int32");
        assertThat(io.mstar.tensor.TensorUuids.isConductorUuid(tokens.uuid())).isTrue();
        h.reader.forget("peer-read");
        // and hands it out inline too (12 bytes, under inline-input-max-bytes), once per edge, so no worker needs to read it
        assertThat(w0Default.inlineData()).hasSize(2).allSatisfy(b64 -> assertThat(java.util.Base64.getDecoder()
                .decode(b64)).containsExactly(1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0));

        // prefill: s0 = 2*6+3 = 15
        h.deliver(W1, h.result("r-1", "worker-1", "prefill_out", 0, 0, 15));
        TensorPointerInfo s0 = h.workerTensor("worker-1", 15);
        h.deliver(W0, new WorkerGraphsDone("r-1", List.of(prefill0), true));
        h.deliver(W1, WorkerGraphsDone.builder("r-1", List.of(prefill1), true)
                .persistSignals(Map.of("state", List.of(s0))).build());
        h.awaitSent(InputSignals.class, 1, s -> true);
        InputSignals decode1 = (InputSignals) h.sentOf(InputSignals.class, s -> true).get(0).body();
        assertThat(h.sentOf(InputSignals.class, s -> true).get(0).worker()).isEqualTo(W1);
        assertThat(decode1.requestInfo().graphWalk()).isEqualTo("decode");
        assertThat(decode1.requestInfo().dynamicLoopIterCounts()).containsExactly(Map.entry("decode_loop", 4));
        assertThat(decode1.requestInfo().randomSeed()).isEqualTo(RequestLifecycle.seedOf("r-1") + 1);
        assertThat(decode1.inputs()).singleElement().satisfies(e -> {
            assertThat(e.nextNode()).isEqualTo("step");
            assertThat(e.tensorInfo()).containsExactly(s0);
        });

        // decode pass 1: four tokens, emitted out of order to check loop order delivery; the last two came inline,
        // in hand at once, and wait behind the two still being read
        h.deliverInOneTurn(W1, h.result("r-1", "worker-1", "token", 1, 1, 17),
                h.result("r-1", "worker-1", "token", 1, 0, 16));
        h.deliver(W1, h.inlineResult("r-1", "worker-1", "token", 1, 2, 18));
        h.deliver(W1, h.inlineResult("r-1", "worker-1", "token", 1, 3, 19));
        TensorPointerInfo s1 = h.workerTensor("worker-1", 19);
        h.deliver(W1, WorkerGraphsDone.builder("r-1", List.of(decode), true).newTokenCounts(Map.of("token", 4))
                .persistSignals(Map.of("state", List.of(s1))).build());
        h.awaitSent(InputSignals.class, 2, s -> true);
        InputSignals decode2 = (InputSignals) h.sentOf(InputSignals.class, s -> true).get(1).body();
        assertThat(decode2.requestInfo().dynamicLoopIterCounts()).containsExactly(Map.entry("decode_loop", 1));
        h.awaitSent(UnpersistTensors.class, 1, s -> true);
        assertThat(((UnpersistTensors) h.sentOf(UnpersistTensors.class, s -> true).get(0).body()).uuidToRefCount())
                .containsExactly(Map.entry(s0.uuid(), 1));

        // decode pass 2: the fifth token reaches max_tokens
        h.deliver(W1, h.result("r-1", "worker-1", "token", 2, 0, 20));
        TensorPointerInfo s2 = h.workerTensor("worker-1", 20);
        h.deliver(W1, WorkerGraphsDone.builder("r-1", List.of(decode), true).newTokenCounts(Map.of("token", 1))
                .persistSignals(Map.of("state", List.of(s2))).build());
        h.awaitSent(UnpersistTensors.class, 2, s -> true);
        assertThat(((UnpersistTensors) h.sentOf(UnpersistTensors.class, s -> true).get(1).body()).uuidToRefCount())
                .containsExactly(Map.entry(s1.uuid(), 1), Map.entry(s2.uuid(), 0));
        h.awaitSent(InputSignals.class, 3, s -> true);
        InputSignals producerDone = (InputSignals) h.sentOf(InputSignals.class, s -> true).get(2).body();
        assertThat(h.sentOf(InputSignals.class, s -> true).get(2).worker()).isEqualTo(W0);
        assertThat(producerDone.partitionName()).isEqualTo("detok");
        assertThat(producerDone.producerDone()).containsExactly("default");
        assertThat(producerDone.inputs()).isEmpty();

        // detok: chunks of two, the last one shorter and final
        h.deliver(W0, h.result("r-1", "worker-0", "text", 0, 0, 160, 170));
        h.deliver(W0, WorkerGraphsDone.builder("r-1", List.of(chunk), true).partitionName("detok").build());
        h.deliver(W0, h.result("r-1", "worker-0", "text", 1, 0, 180, 190));
        h.deliver(W0, WorkerGraphsDone.builder("r-1", List.of(chunk), true).partitionName("detok").build());
        h.deliver(W0, h.result("r-1", "worker-0", "text", 2, 0, 200));
        h.deliver(W0, WorkerGraphsDone.builder("r-1", List.of(chunk), true).partitionName("detok").partitionDone(true).build());

        await().atMost(Duration.ofSeconds(10)).until(() -> !chunks.isEmpty() && chunks.get(chunks.size() - 1).terminal());
        assertThat(chunks.get(chunks.size() - 1).type()).isEqualTo(Chunk.DONE);
        assertThat(chunks).filteredOn(c -> "prefill_out".equals(c.name())).extracting(Chunk::data).containsExactly(List.of(15));
        assertThat(chunks).filteredOn(c -> "token".equals(c.name())).extracting(Chunk::data)
                .containsExactly(List.of(16), List.of(17), List.of(18), List.of(19), List.of(20));
        assertThat(chunks).filteredOn(c -> "text".equals(c.name())).extracting(Chunk::data)
                .containsExactly(List.of(160, 170), List.of(180, 190), List.of(200));
        // every output read was acknowledged to its producer exactly once (a turn's acks share a message); the two
        // inline ones were not read, and are not acknowledged
        List<Map.Entry<String, Long>> acknowledged = new ArrayList<>();
        for (ConductorHarness.Sent s : h.sentOf(TensorReceived.class, s -> true)) {
            TensorReceived received = (TensorReceived) s.body();
            assertThat(received.failedTensorIds()).isEmpty();
            assertThat(received.successfulTensors().values()).containsOnly(1);
            received.successfulTensors().keySet().forEach(uuid -> acknowledged.add(Map.entry(s.worker().value(), uuid)));
        }
        assertThat(acknowledged).hasSize(7).doesNotHaveDuplicates()
                .extracting(Map.Entry::getKey).containsOnly("worker-0", "worker-1");

        // teardown: drain both workers, remove after both ReadsDone, inputs freed
        h.awaitSent(DrainRequest.class, 2, s -> true);
        assertThat(h.sentOf(RemoveRequest.class, s -> true)).isEmpty();
        h.deliver(W0, new ReadsDone("r-1", "worker-0"));
        assertThat(h.loop.askRequests(r -> r.view("r-1").state()).block()).isEqualTo(RequestState.DRAINING);
        h.deliver(W1, new ReadsDone("r-1", "worker-1"));
        h.awaitSent(RemoveRequest.class, 2, s -> true);
        assertThat(h.loop.askRequests(r -> r.view("r-1")).block().outcome()).isEqualTo(RequestOutcome.COMPLETED);
        assertThat(h.liveInputs()).isZero();
        await().atMost(Duration.ofSeconds(5)).until(() -> h.conductorServed.live() == 0);
        assertThat(h.conductorDevice.stats().bytesInUse()).isZero();

        // late messages are ignored
        h.deliver(W1, WorkerGraphsDone.builder("r-1", List.of(decode), true).build());
        h.deliver(W1, new ReadsDone("r-1", "worker-1"));
        assertThat(h.loop.askRequests(RequestLifecycle::liveRequests).block()).isZero();
        assertThat(h.sentOf(RemoveRequest.class, s -> true)).hasSize(2);
    }

    @Test
    void duplicatedFailRequestsGiveTheClientOneErrorAndTearTheRequestDown() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-2", 5, Map.of(), 4), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);

        h.deliver(W1, new FailRequests(Map.of("r-2", "kernel exploded")));
        h.deliver(W1, new FailRequests(Map.of("r-2", "kernel exploded")));
        await().atMost(Duration.ofSeconds(5)).until(() -> chunks.size() == 1);
        assertThat(chunks.get(0).type()).isEqualTo(Chunk.ERROR);
        assertThat(chunks.get(0).error().errorType()).isEqualTo(ErrorType.WORKER_FAILED.value());
        h.awaitSent(DrainRequest.class, 2, s -> true);
        h.deliver(W0, new ReadsDone("r-2", "worker-0"));
        h.deliver(W1, new ReadsDone("r-2", "worker-1"));
        h.awaitSent(RemoveRequest.class, 2, s -> true);
        assertThat(chunks).hasSize(1);
        assertThat(h.liveInputs()).isZero();
    }

    @Test
    void aWorkersTypedFailureReachesTheClientAndEveryDrainSaysTheRequestFailed() {
        List<Chunk> bad = new CopyOnWriteArrayList<>();
        List<Chunk> broken = new CopyOnWriteArrayList<>();
        List<Chunk> huge = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-bad", 5, Map.of(), 4), bad);
        h.submit(ConductorHarness.counterRequest("r-broken", 5, Map.of(), 4), broken);
        h.submit(ConductorHarness.counterRequest("r-huge", 5, Map.of(), 4), huge);
        h.awaitSent(NewRequest.class, 9, s -> true);

        // One message, three requests, three types: a kernel that found the input unusable, a device error, and a
        // request that can never fit the KV cache.
        h.deliver(W1, new FailRequests(Map.of("r-bad", "token 7 is not a digit", "r-broken", "cuMemAlloc failed",
                "r-huge", "needs 600 pages, the pool has 512"), Map.of("r-bad", WorkerErrorType.INVALID_INPUT,
                "r-broken", WorkerErrorType.DEVICE_ERROR, "r-huge", WorkerErrorType.KV_CAPACITY_EXCEEDED)));
        await().atMost(Duration.ofSeconds(5)).until(() -> bad.size() == 1 && broken.size() == 1 && huge.size() == 1);
        assertThat(huge.get(0).error().errorType()).isEqualTo(ErrorType.KV_CAPACITY_EXCEEDED.value());
        assertThat(huge.get(0).error().status()).isEqualTo(413);
        assertThat(bad.get(0).error().errorType()).isEqualTo(ErrorType.INVALID_INPUT.value());
        assertThat(bad.get(0).error().status()).isEqualTo(400);
        assertThat(bad.get(0).error().detail()).isEqualTo("worker-1 (invalid_input): token 7 is not a digit");
        assertThat(broken.get(0).error().errorType()).isEqualTo(ErrorType.WORKER_FAILED.value());
        assertThat(broken.get(0).error().detail()).isEqualTo("worker-1 (device_error): cuMemAlloc failed");

        h.awaitSent(DrainRequest.class, 6, s -> true);
        assertThat(h.sentOf(DrainRequest.class, s -> true)).extracting(s -> ((DrainRequest) s.body()).outcome())
                .hasSize(6).containsOnly(RequestOutcome.FAILED);
    }

    @Test
    void inlineBytesThatDoNotMatchTheirDescriptorFailTheRequestAsAFailedReadWould() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-inline", 5, Map.of(), 4), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);
        ResultTensors good = h.inlineResult("r-inline", "worker-1", "prefill_out", 0, 0, 15);
        ResultTensors shortened = new ResultTensors(good.requestId(), good.modality(), good.graphEdge(),
                good.loopIndices(), good.metadata(), List.of("AAA="));

        h.deliver(W1, shortened);
        await().atMost(Duration.ofSeconds(5)).until(() -> chunks.size() == 1);
        assertThat(chunks.get(0).error().errorType()).isEqualTo(ErrorType.OUTPUT_READ_FAILED.value());
        assertThat(chunks.get(0).error().detail()).contains("came with 2 bytes for its 4");
        h.awaitSent(DrainRequest.class, 2, s -> true);
        assertThat(h.sentOf(TensorReceived.class, s -> true)).as("an inline output is never acknowledged").isEmpty();
    }

    @Test
    void aMessageTheBrokerRefusesFailsItsRunningRequestAtOnceAndTheRequestIsTornDown() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.refused = s -> s.body() instanceof NewRequest && s.worker().equals(W1);
        h.submit(ConductorHarness.counterRequest("r-refused", 5, Map.of(), 4), chunks);

        await().atMost(Duration.ofSeconds(5)).until(() -> chunks.size() == 1);
        assertThat(chunks.get(0).type()).isEqualTo(Chunk.ERROR);
        assertThat(chunks.get(0).error().errorType()).isEqualTo(ErrorType.MESSAGE_NOT_DELIVERED.value());
        assertThat(chunks.get(0).error().detail()).contains("new_request", "worker-1", "delivery timeout");
        h.awaitSent(DrainRequest.class, 2, s -> true);
        h.deliver(W0, new ReadsDone("r-refused", "worker-0"));
        h.deliver(W1, new ReadsDone("r-refused", "worker-1"));
        h.awaitSent(RemoveRequest.class, 2, s -> true);
        assertThat(chunks).as("one terminal chunk, however many sends were refused").hasSize(1);
        assertThat(h.liveInputs()).isZero();
    }

    @Test
    void aRestartedWorkerFailsItsRequestsWithWorkerLostAndTheOtherWorkerIsStillDrained() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-3", 5, Map.of(), 4), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);

        h.incarnations.put(W1, io.mstar.messaging.Incarnation.random());
        h.deliver(W1, new io.mstar.wire.SetupDone("worker-1"));

        await().atMost(Duration.ofSeconds(5)).until(() -> chunks.size() == 1);
        assertThat(chunks.get(0).error().errorType()).isEqualTo(ErrorType.WORKER_LOST.value());
        h.awaitSent(DrainRequest.class, 2, s -> true);
        // worker-1 lost the request: only worker-0's ReadsDone is awaited
        h.deliver(W0, new ReadsDone("r-3", "worker-0"));
        h.awaitSent(RemoveRequest.class, 2, s -> true);
        assertThat(h.liveInputs()).isZero();
    }

    @Test
    void abortIsIdempotentAndADrainTimeoutStillRemovesTheRequest() throws Exception {
        h.close();
        h = new ConductorHarness(io.mstar.deployment.DeploymentConfig.loadDefault(), Duration.ofSeconds(30), Duration.ofMillis(300));
        h.setUpWorkers();
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-4", 5, Map.of(), 4), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);

        assertThat(h.loop.askRequests(r -> r.abort("r-4", AbortReason.ADMIN)).block()).isTrue();
        assertThat(h.loop.askRequests(r -> r.abort("r-4", AbortReason.CLIENT_CANCEL)).block()).isTrue();

        await().atMost(Duration.ofSeconds(5)).until(() -> h.sentOf(RemoveRequest.class, s -> true).size() == 2);
        assertThat(chunks).singleElement().satisfies(c -> {
            assertThat(c.type()).isEqualTo(Chunk.ABORTED);
            assertThat(c.reason()).isEqualTo("admin");
        });
        assertThat(h.sentOf(DrainRequest.class, s -> true)).hasSize(2);
        assertThat(h.registry.get(RequestMeters.DRAIN_TIMEOUTS).counter().count()).isEqualTo(1.0);
        assertThat(h.registry.get(RequestMeters.CANCELLATIONS).tag("reason", "admin").counter().count()).isEqualTo(1.0);
        assertThat(h.liveInputs()).isZero();
    }

    @Test
    void aReadThatOutlivesItsRemovedRequestIsAcknowledgedButLeavesANewRequestWithTheSameIdAlone() throws Exception {
        h.close();
        h = new ConductorHarness(io.mstar.deployment.DeploymentConfig.loadDefault(), Duration.ofSeconds(30), Duration.ofMillis(300));
        h.setUpWorkers();
        // A producer that accepts the read and never answers, until it is closed.
        try (java.net.ServerSocket stalled = new java.net.ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress())) {
            List<java.net.Socket> held = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(stalled.accept());
                    }
                } catch (java.io.IOException closed) {
                    // the test is done with it
                }
            }, "stalled-producer");
            acceptor.start();
            long uuid = h.workerUuids.next();
            TensorPointerInfo stuck = new TensorPointerInfo(uuid, List.of(1L), List.of(1L), "int32", 4L, 0,
                    "127.0.0.1:" + stalled.getLocalPort(), "worker-1");

            List<Chunk> first = new CopyOnWriteArrayList<>();
            h.submit(ConductorHarness.counterRequest("r-9", 5, Map.of(), 4), first);
            h.awaitSent(NewRequest.class, 3, s -> true);
            h.deliver(W1, h.result("r-9", "token", 1, 0, stuck));
            await().atMost(Duration.ofSeconds(5)).until(() -> !held.isEmpty());
            h.loop.askRequests(r -> r.abort("r-9", AbortReason.ADMIN)).block();
            // no ReadsDone: the drain timeout removes it while its read still hangs
            h.awaitSent(RemoveRequest.class, 2, s -> true);

            List<Chunk> second = new CopyOnWriteArrayList<>();
            h.submit(ConductorHarness.counterRequest("r-9", 5, Map.of(), 4), second);
            h.awaitSent(NewRequest.class, 6, s -> true);
            for (java.net.Socket s : held) {
                s.close();
            }
            // the old read fails, and the producer is still told so
            h.awaitSent(TensorReceived.class, 1, s -> ((TensorReceived) s.body()).failedTensorIds().contains(uuid));
            assertThat(h.loop.askRequests(r -> r.view("r-9").state()).block()).isEqualTo(RequestState.RUNNING);
            assertThat(second).isEmpty();

            h.loop.askRequests(r -> r.abort("r-9", AbortReason.ADMIN)).block();
            h.deliver(W0, new ReadsDone("r-9", "worker-0"));
            h.deliver(W1, new ReadsDone("r-9", "worker-1"));
            h.awaitSent(RemoveRequest.class, 4, s -> true);
            assertThat(second).singleElement().satisfies(c -> assertThat(c.reason()).isEqualTo("admin"));
            assertThat(h.liveInputs()).isZero();
        }
    }

    @Test
    void beyondTheConcurrencyLimitRequestsQueueAQueuedAbortTouchesNoWorkerAndAFullQueueIsRefused() throws Exception {
        h.close();
        h = new ConductorHarness(io.mstar.deployment.DeploymentConfig.parse("max_concurrent_requests: 1\n"
                + "max_queued_requests: 1\nmodels:\n  - name: counter\n    node_groups:\n"
                + "      - node_names: [embed, offset, detok]\n        workers: [0]\n"
                + "      - node_names: [count, step]\n        workers: [1]\n", "test"), Duration.ofSeconds(30), Duration.ofSeconds(30));
        h.setUpWorkers();
        List<Chunk> first = new CopyOnWriteArrayList<>();
        List<Chunk> second = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("a", 5, Map.of(), 4), first);
        h.submit(ConductorHarness.counterRequest("b", 5, Map.of(), 4), second);
        assertThat(h.loop.askRequests(r -> r.view("b").state()).block()).isEqualTo(RequestState.QUEUED);
        assertThatThrownBy(() -> h.loop.askRequests(r -> r.submit(ConductorHarness.counterRequest("c", 5, Map.of(), 4)))
                .block()).isInstanceOfSatisfying(ConductorException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.QUEUE_FULL));

        h.loop.askRequests(r -> r.abort("b", AbortReason.CLIENT_CANCEL)).block();
        await().atMost(Duration.ofSeconds(5)).until(() -> second.size() == 1);
        assertThat(h.sentOf(NewRequest.class, s -> ((NewRequest) s.body()).requestId().equals("b"))).isEmpty();
        assertThat(h.sentOf(DrainRequest.class, s -> ((DrainRequest) s.body()).requestId().equals("b"))).isEmpty();
        assertThat(h.liveInputs()).isEqualTo(1);

        // a queued request is admitted when the running one is released
        h.submit(ConductorHarness.counterRequest("d", 5, Map.of(), 4), new CopyOnWriteArrayList<>());
        h.loop.askRequests(r -> r.abort("a", AbortReason.ADMIN)).block();
        h.deliver(W0, new ReadsDone("a", "worker-0"));
        h.deliver(W1, new ReadsDone("a", "worker-1"));
        h.awaitSent(NewRequest.class, 3, s -> ((NewRequest) s.body()).requestId().equals("d"));
        assertThat(h.loop.askRequests(r -> r.view("d").state()).block()).isEqualTo(RequestState.RUNNING);
    }

    @Test
    void aDeadlineAbortsTheRequestAndOutputsArrivingWhileDrainingAreAcknowledgedUnread() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        Submission base = ConductorHarness.counterRequest("r-5", 5, Map.of(), 4);
        h.submit(new Submission(base.requestId(), base.model(), base.inputs(), base.maxTokens(), null, Map.of(), 42L,
                Duration.ofMillis(200)), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);
        assertThat(((NewRequest) h.sentOf(NewRequest.class, s -> true).get(0).body()).requestInfo().randomSeed()).isEqualTo(42L);

        await().atMost(Duration.ofSeconds(5)).until(() -> chunks.size() == 1);
        assertThat(chunks.get(0).type()).isEqualTo(Chunk.ABORTED);
        assertThat(chunks.get(0).reason()).isEqualTo("deadline");
        assertThat(chunks.get(0).error().errorType()).isEqualTo(ErrorType.DEADLINE_EXCEEDED.value());

        // two late outputs handled in one turn of the loop: one message acknowledges both
        ResultTensors late = h.result("r-5", "worker-1", "token", 1, 0, 9);
        ResultTensors later = h.result("r-5", "worker-1", "token", 1, 1, 10);
        h.loop.askRequests(r -> {
            r.onResultTensors(late, W1);
            r.onResultTensors(later, W1);
            return true;
        }).block();
        h.awaitSent(TensorReceived.class, 1, s -> true);
        assertThat(h.sentOf(TensorReceived.class, s -> true)).singleElement().satisfies(s -> {
            assertThat(s.worker()).isEqualTo(W1);
            assertThat(((TensorReceived) s.body()).successfulTensors()).containsExactly(
                    Map.entry(late.graphEdge().tensorInfo().get(0).uuid(), 1),
                    Map.entry(later.graphEdge().tensorInfo().get(0).uuid(), 1));
        });
        assertThat(chunks).hasSize(1);
        h.deliver(W0, new ReadsDone("r-5", "worker-0"));
        // an output acknowledged in the turn that removes the request: its ack goes out ahead of the RemoveRequest
        ResultTensors last = h.result("r-5", "worker-1", "token", 1, 2, 11);
        h.loop.askRequests(r -> {
            r.onResultTensors(last, W1);
            r.onReadsDone(new ReadsDone("r-5", "worker-1"));
            return true;
        }).block();
        h.awaitSent(RemoveRequest.class, 2, s -> true);
        List<String> order = h.sent.stream().map(s -> s.body().getClass().getSimpleName())
                .filter(type -> type.equals("TensorReceived") || type.equals("RemoveRequest")).toList();
        assertThat(order).containsExactly("TensorReceived", "TensorReceived", "RemoveRequest", "RemoveRequest");
        assertThat(((TensorReceived) h.sentOf(TensorReceived.class, s -> true).get(1).body()).successfulTensors())
                .containsOnlyKeys(last.graphEdge().tensorInfo().get(0).uuid());
        assertThat(h.registry.get(RequestMeters.CANCELLATIONS).tag("reason", "deadline").counter().count()).isEqualTo(1.0);
        assertThat(h.liveInputs()).isZero();
    }

    @Test
    void aSilentWorkerIsLostAndItsRequestsFailWithWorkerLost() throws Exception {
        h.close();
        h = new ConductorHarness(io.mstar.deployment.DeploymentConfig.loadDefault(), Duration.ofMillis(400), Duration.ofSeconds(30));
        h.setUpWorkers();
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-6", 5, Map.of(), 4), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);
        // worker-0 keeps its heartbeat, worker-1 goes silent
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (chunks.isEmpty() && System.nanoTime() < until) {
            h.deliver(W0, new io.mstar.wire.SetupDone("worker-0"));
            Thread.sleep(100);
        }
        assertThat(chunks).singleElement().satisfies(c -> {
            assertThat(c.type()).isEqualTo(Chunk.ERROR);
            assertThat(c.error().errorType()).isEqualTo(ErrorType.WORKER_LOST.value());
            assertThat(c.error().detail()).contains("worker-1");
        });
        h.deliver(W0, new ReadsDone("r-6", "worker-0"));
        h.awaitSent(RemoveRequest.class, 2, s -> true);
        assertThat(h.liveInputs()).isZero();
        assertThat(h.registry.get(RequestMeters.REQUESTS).tag("error_type", "worker_lost").counter().count()).isEqualTo(1.0);
    }

    @Test
    void transitionOverheadIsMeasuredPerWalk() {
        h.submit(ConductorHarness.counterRequest("r-7", 5, Map.of(), 4), new CopyOnWriteArrayList<>());
        h.awaitSent(NewRequest.class, 3, s -> true);
        h.deliver(W0, new WorkerGraphsDone("r-7", List.of(h.wg("prefill", "embed")), true));
        // a duplicate from the same worker does not complete the pass
        h.deliver(W0, new WorkerGraphsDone("r-7", List.of(h.wg("prefill", "embed")), true));
        assertThat(h.loop.askRequests(r -> r.view("r-7").state()).block()).isEqualTo(RequestState.RUNNING);
        assertThat(h.sentOf(InputSignals.class, s -> true)).isEmpty();
        h.deliver(W1, WorkerGraphsDone.builder("r-7", List.of(h.wg("prefill", "count")), true)
                .persistSignals(Map.of("state", List.of(h.workerTensor("worker-1", 9)))).build());
        h.awaitSent(InputSignals.class, 1, s -> true);
        assertThat(h.registry.get(RequestMeters.TRANSITION_OVERHEAD).tag("walk", "decode").timer().count()).isEqualTo(1);
        h.loop.askRequests(r -> r.abort("r-7", AbortReason.ADMIN)).block();
        // Every command the loop ran (the three deliveries, the asks, the abort) reported its wait in the queue.
        assertThat(h.registry.get(RequestMeters.LOOP_QUEUE_WAIT).timer().count()).isGreaterThanOrEqualTo(6);
        assertThat(h.registry.get(RequestMeters.LOOP_QUEUE_WAIT).timer().totalTime(TimeUnit.NANOSECONDS)).isPositive();
    }

    @Test
    void stoppingTheLoopAbortsLiveRequestsRemovesThemAndFreesTheirInputs() {
        List<Chunk> chunks = new CopyOnWriteArrayList<>();
        h.submit(ConductorHarness.counterRequest("r-8", 5, Map.of(), 4), chunks);
        h.awaitSent(NewRequest.class, 3, s -> true);
        assertThat(h.conductorServed.live()).isEqualTo(1);

        h.loop.stop();

        assertThat(chunks).singleElement().satisfies(c -> assertThat(c.reason()).isEqualTo("shutdown"));
        assertThat(h.sentOf(DrainRequest.class, s -> true)).hasSize(2);
        assertThat(h.sentOf(RemoveRequest.class, s -> true)).hasSize(2);
        assertThat(h.conductorServed.live()).isZero();
        assertThat(h.conductorDevice.stats().bytesInUse()).isZero();
    }
}
