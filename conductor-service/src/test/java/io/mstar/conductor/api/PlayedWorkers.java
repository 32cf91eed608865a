package io.mstar.conductor.api;

import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.deployment.ConfigDigest;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Received;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.tensor.transport.TensorSource;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.ConductorMessageBody;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.SetupDone;

/**
 * Workers 0 and 1 as a conductor test over HTTP plays them: their control messages go straight into the lifecycle
 * loop (the Kafka path is ConductorControlPlaneTests'), each stamped with that worker's one incarnation, and, when
 * made with {@link #servingTensors}, their outputs come from a real tensor server that the conductor reads. One per
 * test (a new incarnation each); close it after the test.
 */
public final class PlayedWorkers implements AutoCloseable {

    public static final EntityId W0 = EntityId.worker(0);
    public static final EntityId W1 = EntityId.worker(1);
    private static final Duration READ_HOLD_LIMIT = Duration.ofSeconds(20);

    private final LifecycleLoop loop;
    private final Map<EntityId, Incarnation> incarnations = Map.of(W0, Incarnation.random(), W1, Incarnation.random());
    private final ServedTensors served = new ServedTensors();
    private final TensorUuids uuids;
    private final TensorServer server;
    /** Open unless {@link #holdReads()}: a read of a held tensor waits here, on the server's thread. */
    private volatile CountDownLatch readGate = new CountDownLatch(0);

    /** {@code uuids} null: no tensor server. */
    private PlayedWorkers(LifecycleLoop loop, TensorUuids uuids) {
        this.loop = loop;
        this.uuids = uuids;
        this.server = uuids == null ? null : TensorServer.start(this::pin, "127.0.0.1", 0, "127.0.0.1", 1);
    }

    private TensorSource.Pin pin(long uuid) {
        try {
            readGate.await(READ_HOLD_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return served.pin(uuid);
    }

    /** From now on every read waits (at most {@link #READ_HOLD_LIMIT}) until {@link #releaseReads()}. */
    public void holdReads() {
        readGate = new CountDownLatch(1);
    }

    public void releaseReads() {
        readGate.countDown();
    }

    /** Workers that only send control messages. */
    public static PlayedWorkers controlOnly(LifecycleLoop loop) {
        return new PlayedWorkers(loop, null);
    }

    /** Workers that also serve output tensors, their uuids drawn from {@code uuidSeed}. */
    public static PlayedWorkers servingTensors(LifecycleLoop loop, long uuidSeed) {
        return new PlayedWorkers(loop, new TensorUuids(1, new Random(uuidSeed)));
    }

    public void deliver(EntityId from, ConductorMessageBody body) {
        loop.deliver(new Received<>(ConductorMessage.of(body),
                new ControlHeaders.Stamp(from, incarnations.get(from), 0L, new ConfigDigest("aa"))));
    }

    /** SetupDone from both, then waits until the conductor counts every worker ready. */
    public void setUp() {
        deliver(W0, new SetupDone("worker-0"));
        deliver(W1, new SetupDone("worker-1"));
        await().atMost(Duration.ofSeconds(5)).until(() -> loop.snapshot() != null && loop.snapshot().allReady());
    }

    /** Both workers read everything of {@code requestId} that they were sent. */
    public void readsDone(String requestId) {
        deliver(W0, new ReadsDone(requestId, "worker-0"));
        deliver(W1, new ReadsDone(requestId, "worker-1"));
    }

    /** Serves {@code littleEndian} as a one-dimensional {@code dtype} tensor of {@code producer}'s. */
    public TensorPointerInfo tensor(String producer, String dtype, byte[] littleEndian) {
        int size = switch (dtype) {
            case "int16" -> 2;
            default -> 4;
        };
        ByteBuffer b = ByteBuffer.allocateDirect(littleEndian.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(littleEndian).flip();
        long uuid = uuids.next();
        served.publish(uuid, b, () -> { });
        return new TensorPointerInfo(uuid, List.of((long) littleEndian.length / size), List.of(1L), dtype,
                littleEndian.length, 0, server.sessionId(), producer);
    }

    /** The id of the worker graph of {@code walk} that runs {@code node}. */
    public static int graphId(List<WorkerGraph> graphs, String walk, String node) {
        return graphs.stream().filter(g -> g.walk().equals(walk) && g.nodeNames().contains(node)).findFirst()
                .orElseThrow().id();
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
