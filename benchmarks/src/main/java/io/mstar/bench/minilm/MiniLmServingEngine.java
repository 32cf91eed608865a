package io.mstar.bench.minilm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.springframework.util.unit.DataSize;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.model.MiniLmModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.RequestOutcome;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.engine.EngineLoop;
import io.mstar.worker.engine.EngineMeters;
import io.mstar.worker.engine.EngineProperties;
import io.mstar.worker.engine.EngineSnapshot;
import io.mstar.worker.engine.KvCaches;
import io.mstar.worker.engine.Outbox;
import io.mstar.worker.engine.SetupDoneAcks;
import io.mstar.worker.engine.WorkerDataPlane;
import io.mstar.worker.engine.WorkerDataProperties;
import io.mstar.worker.engine.WorkerEngine;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.minilm.MiniLmNodeKernel;

/**
 * One worker of minilm-embed as the service assembles it (data plane, kernel catalog, engine loop), and the conductor's
 * side of it on the driver thread: {@link MiniLmOnnxServing}'s {@code engine} way. Its kernel is timed, so a driver can
 * split a wave's time into the steps and the path around them ({@link Steps}).
 */
final class MiniLmServingEngine implements AutoCloseable {

    static final EntityId WORKER = EntityId.worker(0);
    private static final Duration WAVE_TIMEOUT = Duration.ofMinutes(2);

    private final Path arena;
    private final List<WorkerGraph> graphs;
    private final Map<Integer, List<String>> placement = new LinkedHashMap<>();
    private final BlockingQueue<ConductorMessage> inbox = new LinkedBlockingQueue<>();
    private final WorkerDataPlane conductor;
    private final WorkerDataPlane data;
    private final KernelCatalog kernels;
    private final EngineMeters meters;
    private final EngineLoop loop;
    private final SimpleMeterRegistry registry;
    private final TimedKernel timed;
    private int wave;
    private long waves;
    private long beforeNanos;
    private long afterNanos;

    MiniLmServingEngine(boolean pipeline, MiniLmNodeKernel kernel) throws Exception {
        Path shm = Path.of("/dev/shm");
        arena = Files.isDirectory(shm) ? Files.createTempDirectory(shm, "mstar-minilm-serving-")
                : Files.createTempDirectory("mstar-minilm-serving-");
        DeploymentConfig deployment = DeploymentConfig.parse("""
                models:
                  - name: %s
                    node_groups:
                      - node_names: [%s]
                        workers: [0]
                """.formatted(MiniLmModel.NAME, MiniLmModel.ENCODE), "MiniLmOnnxServing");
        graphs = WorkerGraphSplit.split(deployment, Map.of(MiniLmModel.NAME, MiniLmModel.graph()));
        graphs.forEach(g -> placement.put(g.id(), List.of(WORKER.value())));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        this.registry = registry;
        conductor = new WorkerDataPlane(EntityId.CONDUCTOR, dataSettings(arena),
                new HostDevice(HostDevice.NAME, 16 << 20), new SimpleMeterRegistry());
        data = new WorkerDataPlane(WORKER, dataSettings(arena), new HostDevice(HostDevice.NAME, 64 << 20), registry);
        timed = new TimedKernel(kernel);
        kernels = new KernelCatalog(List.of(new ModelKernels(MiniLmModel.NAME, Map.of(MiniLmModel.ENCODE, timed))));
        Outbox outbox = new Outbox() {
            @Override
            public CompletableFuture<?> toConductor(ConductorMessage message) {
                inbox.add(message);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<?> toWorker(EntityId worker, WorkerMessage message) {
                throw new IllegalStateException("minilm-embed runs on one worker; no message to " + worker);
            }
        };
        EngineLoop[] self = new EngineLoop[1];
        meters = new EngineMeters(registry, () -> self[0].snapshot());
        KvCaches kv = KvCaches.of(deployment, registry);
        // Never positioned: no SetupDone, the driver is the conductor.
        self[0] = new EngineLoop(WORKER, Duration.ofSeconds(2), outbox, new InboxPosition(), new SetupDoneAcks(),
                executor -> new WorkerEngine(WORKER, EngineProperties.defaults().withSteps(pipeline,
                        EngineProperties.Speculation.AUTO), graphs, kernels, data.parts(),
                        outbox, executor, meters, kv), meters);
        loop = self[0];
        loop.start();
    }

    private static WorkerDataProperties dataSettings(Path arena) {
        return new WorkerDataProperties("127.0.0.1", 0, "127.0.0.1", arena, DataSize.ofMegabytes(4), 2,
                DataSize.ofMegabytes(64));
    }

    /** {@code iterations} waves of one request per text; sentences/s over the waves' serving time. */
    double waves(List<String> texts, int iterations) throws Exception {
        long serving = 0;
        for (int i = 0; i < iterations; i++) {
            serving += wave(texts);
        }
        awaitEmpty();
        return texts.size() * (double) iterations / (serving / 1e9);
    }

    /** One request per text at once; answers the nanoseconds from the first NewRequest to the last report. */
    private long wave(List<String> texts) throws Exception {
        wave++;
        List<String> ids = new ArrayList<>();
        List<TensorPointerInfo> inputs = new ArrayList<>();
        List<String> inline = new ArrayList<>();
        for (int s = 0; s < texts.size(); s++) {
            String id = "wave-" + wave + "-" + s;
            ids.add(id);
            byte[] text = texts.get(s).getBytes(StandardCharsets.UTF_8);
            inputs.add(publish(id, text));
            // inline too, as the conductor hands out a text under inline-input-max-bytes
            inline.add(Base64.getEncoder().encodeToString(text));
        }
        List<Integer> graphIds = graphs.stream().map(WorkerGraph::id).toList();
        timed.reset();
        long start = System.nanoTime();
        for (int s = 0; s < ids.size(); s++) {
            loop.deliver(WorkerMessage.of(new NewRequest(ids.get(s), graphIds, placement,
                    List.of(new GraphEdge(MiniLmModel.ENCODE, MiniLmModel.TEXT, List.of(inputs.get(s)))),
                    new CurrentForwardPassInfo(ids.get(s), MiniLmModel.EMBED, false, 0, 0L, 1),
                    List.of(inline.get(s)))));
        }
        long lastDone = 0;
        int embeddings = 0;
        int removed = 0;
        long deadline = start + WAVE_TIMEOUT.toNanos();
        while (removed < ids.size()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("wave " + wave + " not done within " + WAVE_TIMEOUT);
            }
            ConductorMessage message = inbox.poll(50, TimeUnit.MILLISECONDS);
            Object body = message == null ? null : message.body();
            if (body instanceof FailRequests failed) {
                throw new IllegalStateException("requests failed: " + failed.errors());
            } else if (body instanceof ResultTensors result) {
                embeddings += result.graphEdge().name().equals(MiniLmModel.EMBEDDING) ? 1 : 0;
                if (!result.inline()) {
                    TensorPointerInfo t = result.graphEdge().tensorInfo().get(0);
                    loop.deliver(WorkerMessage.of(new TensorReceived(result.requestId(), Map.of(t.uuid(), 1),
                            List.of())));
                }
            } else if (body instanceof WorkerGraphsDone done) {
                lastDone = System.nanoTime();
                loop.deliver(WorkerMessage.of(new DrainRequest(done.requestId(), RequestOutcome.COMPLETED)));
            } else if (body instanceof ReadsDone reads) {
                loop.deliver(WorkerMessage.of(new RemoveRequest(reads.requestId())));
                conductor.parts().store().removeRequest(reads.requestId());
                removed++;
            }
        }
        if (embeddings != ids.size()) {
            throw new IllegalStateException(embeddings + " embeddings for " + ids.size() + " requests");
        }
        waves++;
        beforeNanos += timed.firstCall - start;
        afterNanos += lastDone - timed.lastReturn;
        return lastDone - start;
    }

    /** The engine's steps so far (count, seconds, calls), from its own step timer and batch-size meter. */
    Steps steps() {
        Timer step = registry.find("mstar.worker.step").timer();
        DistributionSummary size = registry.find("mstar.worker.batch.size").summary();
        return step == null || size == null ? new Steps(0, 0, 0, 0, 0, 0)
                : new Steps(step.count(), step.totalTime(TimeUnit.NANOSECONDS) / 1e9, size.totalAmount(), waves,
                        beforeNanos / 1e9, afterNanos / 1e9);
    }

    /** The text as the conductor's input tensor, published for the worker to read. */
    private TensorPointerInfo publish(String requestId, byte[] text) {
        long uuid = conductor.parts().uuids().next();
        DeviceBuffer buffer = conductor.device().allocate(text.length);
        conductor.device().copyFromHost(ByteBuffer.wrap(text), buffer, 0);
        conductor.parts().store().putTensor(requestId, uuid, buffer, new TensorPointerInfo(uuid,
                List.of((long) text.length), List.of(1L), MiniLmModel.TEXT_DTYPE, text.length, buffer.address(),
                conductor.sessionId(), EntityId.CONDUCTOR.value()), null);
        conductor.parts().store().setMetadata(uuid, true, null);
        return conductor.parts().publisher().publish(conductor.parts().store(), uuid);
    }

    /** Until the engine holds no request and no tensor, so each round starts from the same state. */
    private void awaitEmpty() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        EngineSnapshot s = loop.snapshot();
        while (s.requests() > 0 || s.tensors().liveTensors() > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the engine still holds " + s + " after its round");
            }
            inbox.poll(10, TimeUnit.MILLISECONDS);
            s = loop.snapshot();
        }
    }

    @Override
    public void close() throws Exception {
        try {
            loop.stop();
            kernels.close();
            meters.close();
        } finally {
            try {
                data.close();
                conductor.parts().store().removeAll();
                conductor.close();
            } finally {
                try (Stream<Path> left = Files.walk(arena)) {
                    left.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                }
            }
        }
    }

    /**
     * Engine steps: how many, their seconds, and the calls they ran; and over the waves, the seconds from a wave's
     * first NewRequest to the kernel's first call, and from the kernel's last return to the wave's last
     * WorkerGraphsDone.
     */
    record Steps(long count, double seconds, double calls, long waves, double beforeSeconds, double afterSeconds) {
        Steps minus(Steps earlier) {
            return new Steps(count - earlier.count, seconds - earlier.seconds, calls - earlier.calls,
                    waves - earlier.waves, beforeSeconds - earlier.beforeSeconds, afterSeconds - earlier.afterSeconds);
        }
    }

    /**
     * The encoder's kernel with the time of its first call and last return in a wave (the step thread writes, the
     * driver reads).
     */
    private static final class TimedKernel implements NodeKernel, AutoCloseable {
        private final MiniLmNodeKernel kernel;
        private volatile long firstCall;
        private volatile long lastReturn;

        TimedKernel(MiniLmNodeKernel kernel) {
            this.kernel = kernel;
        }

        @Override
        public int maxBatchSize() {
            return kernel.maxBatchSize();
        }

        @Override
        public List<NodeResult> forward(Device device, List<NodeCall> batch) {
            if (firstCall == 0) {
                firstCall = System.nanoTime();
            }
            try {
                return kernel.forward(device, batch);
            } finally {
                lastReturn = System.nanoTime();
            }
        }

        /** A new wave: no call yet. */
        void reset() {
            firstCall = 0;
        }

        @Override
        public void close() {
            kernel.close();
        }
    }
}
