package io.mstar.bench.tts;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.springframework.util.unit.DataSize;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.RequestOutcome;
import io.mstar.wire.RequestScoped;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
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
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;

/**
 * {@link ServingEfficiency}'s two workers of one engine mode and the conductor's side of them: a store and tensor
 * server for the prompts (a data plane built as a worker's is) and the toy-tts policy, played on the driver thread.
 */
final class ServingCluster implements AutoCloseable {

    private static final SamplingConfig SAMPLING = new SamplingConfig(null, 0.8, 40, 1.0, true, 1.0, 0L);
    private static final Duration ROUND_TIMEOUT = Duration.ofMinutes(2);
    static final EntityId LM_WORKER = EntityId.worker(0);
    static final EntityId CODEC_WORKER = EntityId.worker(1);
    /** The conductor's default {@code mstar.conductor.data.inline-input-max-bytes}, which the driver plays by. */
    private static final int INLINE_INPUT_MAX_BYTES = 1024;

    final String name;
    private final List<WorkerGraph> graphs;
    private final Map<Integer, List<String>> placement = new TreeMap<>();
    private final WorkerDataPlane conductor;
    private final Map<String, EngineLoop> loops = new ConcurrentHashMap<>();
    private final List<Worker> workers = new ArrayList<>();
    private final BlockingQueue<Arrival> inbox = new LinkedBlockingQueue<>();
    private final Map<String, Run> runs = new HashMap<>();
    private long decodeStart;
    private long lastToken;
    private int removed;
    /** Step threads claimed by the clusters so far, shared by all of them. */
    private final Set<Long> claimedStepThreads;
    private long loopThread;
    private long stepThread;
    /** Per batch: the best timed round's tokens/s and the lm worker's steps in it. */
    final Map<Integer, Double> bestRates = new HashMap<>();
    final Map<Integer, LmSteps> bestSteps = new HashMap<>();

    ServingCluster(ServingEfficiency.Mode mode, Path arena, List<WorkerGraph> graphs, DeploymentConfig deployment,
            Supplier<Device> devices, Set<Long> claimedStepThreads) throws Exception {
        this.name = mode.name();
        this.claimedStepThreads = claimedStepThreads;
        this.graphs = graphs;
        ModelConfig model = deployment.models().get(0);
        for (WorkerGraph g : graphs) {
            placement.put(g.id(), model.nodeGroups().get(g.nodeGroupIndex()).workers().stream()
                    .map(w -> EntityId.worker(w).value()).toList());
        }
        Files.createDirectories(arena);
        conductor = new WorkerDataPlane(EntityId.CONDUCTOR, Worker.dataSettings(arena),
                new HostDevice(HostDevice.NAME, 16 << 20), new SimpleMeterRegistry());
        Outbox outbox = new Outbox() {
            @Override
            public CompletableFuture<?> toConductor(ConductorMessage message) {
                inbox.add(new Arrival(System.nanoTime(), message));
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<?> toWorker(EntityId worker, WorkerMessage message) {
                send(worker.value(), message);
                return CompletableFuture.completedFuture(null);
            }
        };
        try {
            for (EntityId id : List.of(LM_WORKER, CODEC_WORKER)) {
                workers.add(Worker.start(id, arena, devices.get(), graphs, deployment, mode.engine(),
                        mode.resident(), outbox));
                loops.put(id.value(), workers.get(workers.size() - 1).loop());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void send(String worker, WorkerMessage message) {
        EngineLoop loop = loops.get(worker);
        if (loop == null) {
            throw new IllegalStateException("no worker " + worker + " for " + message.messageType());
        }
        loop.deliver(message);
    }

    private List<Integer> partitionGraphs(String... walks) {
        List<String> w = List.of(walks);
        return graphs.stream().filter(g -> w.contains(g.walk())).map(WorkerGraph::id).sorted().toList();
    }

    private static CurrentForwardPassInfo info(Run run, String walk, String partition, int pass,
            Map<String, Integer> loops) {
        Map<String, MultiSamplingConfig> sampling = Map.of(
                ToyTtsModel.LM, new MultiSamplingConfig(SAMPLING, Map.of()),
                ToyTtsModel.CODEC, new MultiSamplingConfig(SAMPLING, Map.of()));
        return new CurrentForwardPassInfo(run.id, walk, false, pass, run.seed + pass, run.maxTokens, sampling,
                Map.of(), null, partition, null, loops);
    }

    private static CurrentForwardPassInfo codecInfo(Run run) {
        return info(run, ToyTtsModel.CODEC_WALK, ToyTtsModel.CODEC_PARTITION, 0, Map.of());
    }

    /** B requests from NewRequest to removal; answers decode tokens/s. */
    double round(int batch, int promptBytes, int tokens, int round) throws Exception {
        LmSteps before = LmSteps.of(workers.get(0).registry(), lmThreads());
        runs.clear();
        decodeStart = 0;
        lastToken = 0;
        removed = 0;
        for (int r = 0; r < batch; r++) {
            Run run = new Run(name + "-" + batch + "-" + round + "-" + r, 1000L + r, tokens);
            runs.put(run.id, run);
            byte[] prompt = new byte[promptBytes];
            for (int i = 0; i < promptBytes; i++) {
                prompt[i] = (byte) promptByte(r, i, promptBytes);
            }
            start(run, prompt);
        }
        long deadline = System.nanoTime() + ROUND_TIMEOUT.toNanos();
        while (removed < batch) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(name + ": batch " + batch + " not done within " + ROUND_TIMEOUT
                        + "; " + removed + " requests removed");
            }
            Arrival arrival = inbox.poll(50, TimeUnit.MILLISECONDS);
            if (arrival != null) {
                handle(arrival);
            }
        }
        runs.values().stream().filter(r -> r.textTokens != tokens).findAny().ifPresent(r -> {
            throw new IllegalStateException(r.id + " emitted " + r.textTokens + " text tokens, not " + tokens);
        });
        awaitEmpty();
        long nanos = lastToken - decodeStart;
        double rate = batch * (double) tokens / (nanos / 1e9);
        LmSteps after = LmSteps.of(workers.get(0).registry(), lmThreads());
        if (round >= 0 && rate > bestRates.getOrDefault(batch, 0.0)) {
            bestRates.put(batch, rate);
            bestSteps.put(batch, after.minus(before, nanos));
        }
        return rate;
    }

    private void start(Run run, byte[] prompt) {
        long uuid = conductor.parts().uuids().next();
        Device device = conductor.device();
        DeviceBuffer buffer = device.allocate(prompt.length);
        device.copyFromHost(ByteBuffer.allocateDirect(prompt.length).put(prompt).flip(), buffer, 0);
        conductor.parts().store().putTensor(run.id, uuid, buffer, new TensorPointerInfo(uuid,
                List.of((long) prompt.length), List.of(1L), ToyTtsModel.INPUT_DTYPE, prompt.length,
                buffer.address(), conductor.sessionId(), EntityId.CONDUCTOR.value()), null);
        conductor.parts().store().setMetadata(uuid, true, null);
        TensorPointerInfo input = conductor.parts().publisher().publish(conductor.parts().store(), uuid);
        send(LM_WORKER.value(), WorkerMessage.of(new NewRequest(run.id,
                partitionGraphs(ToyTtsModel.PREFILL, ToyTtsModel.DECODE), placement,
                List.of(new GraphEdge(ToyTtsModel.LM, ToyTtsModel.TEXT_INPUT, List.of(input))),
                info(run, ToyTtsModel.PREFILL, ToyTtsModel.LM_PARTITION, 0, Map.of()),
                // inline too, as the conductor hands out a prompt under its inline-input-max-bytes (default 1 KiB)
                prompt.length <= INLINE_INPUT_MAX_BYTES ? List.of(Base64.getEncoder().encodeToString(prompt))
                        : List.of())));
        send(CODEC_WORKER.value(), WorkerMessage.of(new NewRequest(run.id, partitionGraphs(ToyTtsModel.CODEC_WALK),
                placement, List.of(), codecInfo(run))));
    }

    private void handle(Arrival arrival) {
        Object body = arrival.message().body();
        if (body instanceof FailRequests failed) {
            throw new IllegalStateException(name + ": requests failed: " + failed.errors());
        }
        if (!(body instanceof RequestScoped scoped) || !runs.containsKey(scoped.requestId())) {
            return; // a previous round's late report
        }
        Run run = runs.get(scoped.requestId());
        if (body instanceof ResultTensors result) {
            if (!result.inline()) {
                Map<Long, Integer> read = new HashMap<>();
                result.graphEdge().tensorInfo().forEach(t -> read.put(t.uuid(), 1));
                String producer = result.graphEdge().tensorInfo().get(0).sourceEntity();
                send(producer, WorkerMessage.of(new TensorReceived(run.id, read, List.of())));
            }
            if (result.graphEdge().name().equals(ToyTtsModel.TEXT)) {
                run.textTokens++;
                lastToken = Math.max(lastToken, arrival.nanos());
            }
        } else if (body instanceof WorkerGraphsDone done && !run.draining) {
            onDone(run, done);
        } else if (body instanceof ReadsDone reads && run.readsDone.add(reads.entityId()) && run.draining
                && run.readsDone.size() == loops.size()) {
            loops.keySet().forEach(w -> send(w, WorkerMessage.of(new RemoveRequest(run.id))));
            conductor.parts().store().removeRequest(run.id);
            removed++;
        }
    }

    /** The toy-tts policy: the lm's passes one after another, the codec done on its final chunk. */
    private void onDone(Run run, WorkerGraphsDone done) {
        if (done.partitionName().equals(ToyTtsModel.CODEC_PARTITION)) {
            run.codecDone |= done.partitionDone();
        } else {
            TensorPointerInfo consumed = run.state;
            run.state = done.persistSignals().get(ToyTtsModel.STATE).get(0);
            if (run.lmPass == 0) {
                decode(run);
            } else {
                unpersist(run, consumed, 1); // handed out once, to the decode pass that just ended
                run.produced += done.newTokenCounts().getOrDefault(ToyTtsModel.TEXT, 0);
                List<TensorPointerInfo> stopped = done.persistSignals().getOrDefault(ToyTtsModel.STOPPED,
                        List.of());
                if (stopped.isEmpty() && run.produced < run.maxTokens) {
                    decode(run);
                } else {
                    stopped.forEach(t -> unpersist(run, t, 0));
                    unpersist(run, run.state, 0);
                    run.state = null;
                    run.lmDone = true;
                    send(CODEC_WORKER.value(), WorkerMessage.of(new InputSignals(run.id, List.of(), codecInfo(run),
                            ToyTtsModel.CODEC_PARTITION, Set.of(ToyTtsModel.LM_PARTITION))));
                }
            }
        }
        if (run.lmDone && run.codecDone) {
            run.draining = true;
            loops.keySet().forEach(w -> send(w, WorkerMessage.of(new DrainRequest(run.id,
                    RequestOutcome.COMPLETED))));
        }
    }

    private void decode(Run run) {
        run.lmPass++;
        int iterations = Math.min(ToyTtsModel.DECODE_MAX_ITERS, run.maxTokens - run.produced);
        CurrentForwardPassInfo info = info(run, ToyTtsModel.DECODE, ToyTtsModel.LM_PARTITION, run.lmPass,
                Map.of(ToyTtsModel.DECODE_LOOP, iterations));
        if (decodeStart == 0) {
            decodeStart = System.nanoTime();
        }
        send(LM_WORKER.value(), WorkerMessage.of(new InputSignals(run.id,
                List.of(new GraphEdge(ToyTtsModel.LM, ToyTtsModel.STATE, List.of(run.state))), info,
                ToyTtsModel.LM_PARTITION, null)));
    }

    private void unpersist(Run run, TensorPointerInfo tensor, int handouts) {
        send(tensor.sourceEntity(),
                WorkerMessage.of(new UnpersistTensors(run.id, Map.of(tensor.uuid(), handouts))));
    }

    /**
     * The lm worker's engine loop and, once it exists, its step thread (none in synchronous mode). Every mode's
     * workers have the same thread names, so the step thread is the one no other cluster claimed: it starts with
     * this cluster's first step, and the clusters' rounds never overlap.
     */
    private List<Long> lmThreads() {
        if (loopThread == 0) {
            loopThread = workers.get(0).loop().ask(s -> Thread.currentThread().getId()).block();
        }
        if (stepThread == 0) {
            String name = "mstar-" + LM_WORKER.value() + "-step";
            Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name))
                    .map(Thread::getId).filter(claimedStepThreads::add).findFirst().ifPresent(id -> stepThread = id);
        }
        return stepThread == 0 ? List.of(loopThread) : List.of(loopThread, stepThread);
    }

    /** Until both engines hold no request and no tensor, so the next round starts from the same state. */
    private void awaitEmpty() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (Worker w : workers) {
            EngineSnapshot s = w.loop().snapshot();
            while (s.requests() > 0 || s.tensors().liveTensors() > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + ": an engine still holds " + s + " after its round");
                }
                inbox.poll(10, TimeUnit.MILLISECONDS); // late reports of removed requests: nothing owed
                s = w.loop().snapshot();
            }
        }
    }

    @Override
    public void close() {
        try {
            closeAll(workers);
        } finally {
            conductor.parts().store().removeAll();
            conductor.close();
        }
    }

    /**
     * Prompt byte {@code i} of request {@code r}: the engine's prefill feeds {@code [BOS, bytes but the last]} and the
     * first decode step the last, the very tokens {@link ToyTtsDecode#round} feeds.
     */
    private static int promptByte(int r, int i, int promptBytes) {
        return i == promptBytes - 1 ? 'a' + r % 26 : 'a' + ((i + 1) * 7 + r) % 26;
    }

    /** Closes every one, also after a failure, and throws the first failure. */
    static void closeAll(List<? extends AutoCloseable> all) {
        IllegalStateException failed = new IllegalStateException("closing failed");
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception e) {
                failed.addSuppressed(e);
            }
        }
        if (failed.getSuppressed().length > 0) {
            throw failed;
        }
    }

    /** One worker as the service assembles it, with an outbox of the driver's. */
    private record Worker(EngineLoop loop, WorkerDataPlane data, KernelCatalog kernels, EngineMeters meters,
            SimpleMeterRegistry registry) implements AutoCloseable {

        static Worker start(EntityId id, Path arena, Device device, List<WorkerGraph> graphs,
                DeploymentConfig deployment, EngineProperties engine, ResidentMode resident, Outbox outbox) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            WorkerDataPlane data = new WorkerDataPlane(id, dataSettings(arena), device, registry);
            KernelCatalog kernels = new KernelCatalog(List.of(ToyTtsKernels.forDevice(device,
                    ResidentSettings.of(resident), registry)));
            EngineLoop[] self = new EngineLoop[1];
            EngineMeters meters = new EngineMeters(registry, () -> self[0].snapshot());
            KvCaches kv = KvCaches.of(deployment, registry);
            // Never positioned: no SetupDone, the driver is the conductor.
            self[0] = new EngineLoop(id, Duration.ofSeconds(2), outbox, new InboxPosition(), new SetupDoneAcks(),
                    executor -> new WorkerEngine(id, engine, graphs, kernels, data.parts(), outbox, executor, meters,
                            kv), meters);
            self[0].start();
            return new Worker(self[0], data, kernels, meters, registry);
        }

        static WorkerDataProperties dataSettings(Path arena) {
            return new WorkerDataProperties("127.0.0.1", 0, "127.0.0.1", arena, DataSize.ofMegabytes(4), 2,
                    DataSize.ofMegabytes(256));
        }

        @Override
        public void close() {
            // The engine frees its tensors and KV pools on the loop; weights leave before the device closes.
            try {
                loop.stop();
                kernels.close();
                meters.close();
            } finally {
                data.close();
            }
        }
    }

    /** A conductor message and when its worker sent it. */
    private record Arrival(long nanos, ConductorMessage message) {
    }

    /** One request as the conductor policy sees it. */
    private static final class Run {
        final String id;
        final long seed;
        final int maxTokens;
        final Set<String> readsDone = new HashSet<>();
        TensorPointerInfo state;
        int lmPass;
        int produced;
        int textTokens;
        boolean lmDone;
        boolean codecDone;
        boolean draining;

        Run(String id, long seed, int maxTokens) {
            this.id = id;
            this.seed = seed;
            this.maxTokens = maxTokens;
        }
    }
}
