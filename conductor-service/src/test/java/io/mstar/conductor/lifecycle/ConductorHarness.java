package io.mstar.conductor.lifecycle;

import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.conductor.model.ConductorPolicies;
import io.mstar.conductor.output.Chunk;
import io.mstar.conductor.tensors.ConductorTensors;
import io.mstar.deployment.ConfigDigest;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Received;
import io.mstar.model.ModelGraphs;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.SameHostPolicy;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.ConductorMessageBody;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WorkerMessageBody;

/**
 * A whole conductor lifecycle in-process: the real loop, request lifecycle, tensor store and tensor server of the
 * conductor, a capturing outbox, and a "workers" side with its own real served tensors and tensor server from which
 * the conductor really reads outputs. Messages are delivered as the Kafka inbox would.
 */
final class ConductorHarness implements AutoCloseable {

    record Sent(EntityId worker, WorkerMessageBody body) {
    }

    final DeploymentConfig config;
    final List<WorkerGraph> workerGraphs;
    final List<Sent> sent = new CopyOnWriteArrayList<>();
    /** Sends the "broker" refuses, as a producer that gave up on them; they are still recorded in {@link #sent}. */
    volatile Predicate<Sent> refused = s -> false;
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final HostDevice conductorDevice = new HostDevice();
    final ServedTensors conductorServed = new ServedTensors();
    final TensorServer conductorServer;
    final ArenaReader arena;
    final TensorReader reader;
    final ConductorTensors tensors;
    final RequestLifecycle requests;
    final LifecycleLoop loop;
    final Map<EntityId, Incarnation> incarnations = new java.util.HashMap<>();

    // the workers' side
    final ServedTensors workerServed = new ServedTensors();
    final TensorServer workerServer;
    final TensorUuids workerUuids = new TensorUuids(1, new Random(7));
    final List<Long> workerTensors = new CopyOnWriteArrayList<>();

    ConductorHarness(DeploymentConfig config, Duration lossTimeout, Duration drainTimeout) throws Exception {
        this(config, lossTimeout, drainTimeout, 1024);
    }

    /** @param inlineInputMaxBytes {@code mstar.conductor.data.inline-input-max-bytes} (the service's default: 1024) */
    ConductorHarness(DeploymentConfig config, Duration lossTimeout, Duration drainTimeout, int inlineInputMaxBytes)
            throws Exception {
        this.config = config;
        this.workerGraphs = WorkerGraphSplit.split(config, ModelGraphs.of(
                config.models().stream().map(m -> m.name()).toList()));
        conductorServer = TensorServer.start(conductorServed, "127.0.0.1", 0, "127.0.0.1", 1);
        workerServer = TensorServer.start(workerServed, "127.0.0.1", 0, "127.0.0.1", 1);
        Path dir = Files.createTempDirectory("mstar-conductor-test");
        arena = new ArenaReader(dir);
        reader = new TensorReader(ReaderSettings.defaults("conductor", java.util.Set.of("127.0.0.1"))
                .withSameHost(SameHostPolicy.NEVER).withArenaDirectory(dir), arena, registry);
        tensors = new ConductorTensors(conductorDevice, conductorServed, reader,
                TensorUuids.forEntity(EntityId.CONDUCTOR.value()), conductorServer.sessionId(), inlineInputMaxBytes);
        RequestMeters requestMeters = new RequestMeters(registry);
        requests = new RequestLifecycle(config, ConductorPolicies.builtIn(), this::send, tensors, requestMeters,
                drainTimeout, Clock.systemUTC());
        List<EntityId> workers = config.workerOrdinals().stream().map(EntityId::worker).toList();
        loop = new LifecycleLoop(new WorkerRegistry(workers, lossTimeout,
                new WorkerRegistryMeters(registry, workers)), requests, requestMeters);
        loop.start();
    }

    private CompletableFuture<?> send(EntityId worker, WorkerMessageBody body) {
        Sent s = new Sent(worker, body);
        sent.add(s);
        return refused.test(s)
                ? CompletableFuture.failedFuture(new TimeoutException("Expiring 1 record(s): delivery timeout"))
                : CompletableFuture.completedFuture(null);
    }

    static ConductorHarness counter() throws Exception {
        return new ConductorHarness(DeploymentConfig.loadDefault(), Duration.ofSeconds(30), Duration.ofSeconds(30));
    }

    void setUpWorkers() {
        for (int ordinal : config.workerOrdinals()) {
            EntityId w = EntityId.worker(ordinal);
            incarnations.putIfAbsent(w, Incarnation.random());
            deliver(w, new SetupDone(w.value()));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> loop.snapshot() != null && loop.snapshot().allReady());
    }

    void deliver(EntityId from, ConductorMessageBody body) {
        Incarnation incarnation = incarnations.computeIfAbsent(from, w -> Incarnation.random());
        loop.deliver(new Received<>(ConductorMessage.of(body),
                new ControlHeaders.Stamp(from, incarnation, 0L, new ConfigDigest("aa"))));
    }

    /**
     * Delivers {@code bodies} so that the loop takes them all before anything they start (a read) can come back: the
     * loop is held on a latch while they are queued behind it. Without it a read of the first could land before the
     * second is queued, on a loaded machine, and the test would check timing rather than ordering.
     */
    void deliverInOneTurn(EntityId from, ConductorMessageBody... bodies) {
        CountDownLatch queued = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(1);
        loop.askRequests(r -> {
            held.countDown();
            try {
                return queued.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }).subscribe();
        try {
            if (!held.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the loop did not take the hold");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        for (ConductorMessageBody body : bodies) {
            deliver(from, body);
        }
        queued.countDown();
    }

    /** Submits on the loop; answers the admission with chunks collected into {@code into}. */
    RequestLifecycle.Admission submit(Submission submission, List<Chunk> into) {
        RequestLifecycle.Admission admission = loop.askRequests(r -> r.submit(submission)).block(Duration.ofSeconds(5));
        admission.chunks().subscribe(into::add);
        return admission;
    }

    static Submission counterRequest(String id, int maxTokens, Map<String, String> kwargs, int... tokens) {
        return new Submission(id, "counter", Map.of("tokens", new Submission.InputTensor("int32",
                List.of((long) tokens.length), int32(tokens))), maxTokens, null, kwargs, null, null);
    }

    /** Little-endian int32 bytes, as tensors hold them. */
    private static byte[] int32(int... values) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        return b.array();
    }

    /** Publishes an int32 tensor on the workers' server as {@code producer} would; answers its descriptor. */
    TensorPointerInfo workerTensor(String producer, int... values) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * values.length).put(int32(values)).flip();
        long uuid = workerUuids.next();
        workerServed.publish(uuid, b, () -> { });
        workerTensors.add(uuid);
        return new TensorPointerInfo(uuid, List.of((long) values.length), List.of(1L), "int32", 4L * values.length, 0,
                workerServer.sessionId(), producer);
    }

    ResultTensors result(String requestId, String producer, String signal, int fwd, int iteration, int... values) {
        return result(requestId, signal, fwd, iteration, workerTensor(producer, values));
    }

    ResultTensors result(String requestId, String signal, int fwd, int iteration, TensorPointerInfo tensor) {
        return result(requestId, signal, fwd, iteration, tensor, List.of());
    }

    /** An output whose bytes travel in its message, as a worker sends a token-sized one; nothing is published. */
    ResultTensors inlineResult(String requestId, String producer, String signal, int fwd, int iteration, int... values) {
        TensorPointerInfo tensor = new TensorPointerInfo(workerUuids.next(), List.of((long) values.length), List.of(1L),
                "int32", 4L * values.length, 0, workerServer.sessionId(), producer);
        return result(requestId, signal, fwd, iteration, tensor, List.of(Base64.getEncoder().encodeToString(int32(values))));
    }

    private static ResultTensors result(String requestId, String signal, int fwd, int iteration, TensorPointerInfo tensor,
            List<String> inlineData) {
        NestedLoopIndices indices = new NestedLoopIndices(List.of("decode_loop"), Map.of("decode_loop", iteration), fwd);
        return new ResultTensors(requestId, "text", GraphEdge.builder("emit_to_client", signal)
                .tensorInfo(List.of(tensor)).outputModality("text").build(), indices, Map.of(), inlineData);
    }

    int wg(String walk, String node) {
        return workerGraphs.stream().filter(g -> g.walk().equals(walk) && g.nodeNames().contains(node)).findFirst()
                .orElseThrow().id();
    }

    <T extends WorkerMessageBody> List<Sent> sentOf(Class<T> type, Predicate<Sent> filter) {
        List<Sent> out = new ArrayList<>();
        for (Sent s : sent) {
            if (type.isInstance(s.body()) && filter.test(s)) {
                out.add(s);
            }
        }
        return out;
    }

    <T extends WorkerMessageBody> void awaitSent(Class<T> type, int count, Predicate<Sent> filter) {
        await().atMost(Duration.ofSeconds(10)).until(() -> sentOf(type, filter).size() >= count);
    }

    int liveInputs() {
        return loop.askRequests(RequestLifecycle::liveInputTensors).block(Duration.ofSeconds(5));
    }

    @Override
    public void close() {
        loop.stop();
        reader.close();
        arena.close();
        conductorServer.close();
        workerServer.close();
        conductorDevice.close();
    }
}
