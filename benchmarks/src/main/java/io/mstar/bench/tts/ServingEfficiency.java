package io.mstar.bench.tts;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.springframework.util.unit.DataSize;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
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
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kv.KvCache;

/**
 * How much of the toy-tts {@code lm} kernels' decode throughput survives the real worker engine. For each batch size
 * B it measures, in one process and one run: the kernels alone, by {@link ToyTtsDecode}'s loop (a backend call per
 * step over the paged KV cache, then a seeded sample per request), and B concurrent requests served by real
 * {@link EngineLoop}s in four step modes: {@code synchronous} (steps on the loop), {@code pipelined} (steps on the
 * step thread), {@code speculated} (the pipeline building the next decode step while one runs) and {@code resident}
 * (speculated, with the lm's decode steps on resident tables: docs/resident-planning.md). The driver thread
 * plays the conductor's toy-tts policy message for message: NewRequest with the prefill, decode passes of
 * {@code min(16, tokens left)} iterations carrying the persisted {@code state}, the old state unpersisted,
 * {@code producer_done} to the codec, then drain, ReadsDone and remove, so every round ends with both engines empty.
 * Control messages travel in memory (the outbox completes every send at once, as a broker ack); tensors go through
 * the real data planes. The lm runs on worker 0; the graph streams every token to the codec partition, so worker 1
 * runs it in the same process (its audio is acknowledged unread: the client's copy is not what is measured).
 *
 * <p>Engine tokens/s = B * tokens / the time from the round's first decode InputSignals to the arrival of its last
 * text token: decode only, but with the policy's round trip every 16 tokens, the codec's streaming, and any prefill
 * the engine did not batch with the first. Every request samples at temperature 0.8, top-k 40 with EOS ignored, so
 * each runs exactly {@code --tokens} tokens. Ratios are engine tokens/s over the kernel-only tokens/s of the same
 * batch, measured in the same run; each figure is the best of its rounds, the ways taking turns
 * round by round, after a warm-up pass of every way at every batch (so the JIT compiles before anything is timed)
 * and {@code --warmup} seconds of untimed rounds of every way per batch (at least one each). The warm-up is by time:
 * the engine's per-step code runs once a step, and a few hundred steps leave it short of the JIT's last tier.
 *
 * <p>Options: {@code --device host|cuda|auto} (auto: CUDA when a GPU is visible), {@code --batches 1,8,32},
 * {@code --tokens 128}, {@code --prompt-bytes 32}, {@code --rounds 3}, {@code --warmup 20}, {@code --modes} (some of
 * {@code synchronous,pipelined,speculated,resident}, the default), {@code --verbose} (INFO logging, see
 * {@link DriverLogging}).
 */
public final class ServingEfficiency {

    private static final SamplingConfig SAMPLING = new SamplingConfig(null, 0.8, 40, 1.0, true, 1.0, 0L);
    private static final Duration ROUND_TIMEOUT = Duration.ofMinutes(2);
    private static final EntityId LM_WORKER = EntityId.worker(0);
    private static final EntityId CODEC_WORKER = EntityId.worker(1);
    /** The conductor's default {@code mstar.conductor.data.inline-input-max-bytes}, which the driver plays by. */
    private static final int INLINE_INPUT_MAX_BYTES = 1024;
    private static final List<Mode> MODES = List.of(
            new Mode("synchronous", EngineProperties.defaults().withSteps(false, EngineProperties.Speculation.OFF),
                    ResidentMode.OFF),
            new Mode("pipelined", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.OFF),
                    ResidentMode.OFF),
            new Mode("speculated", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON),
                    ResidentMode.OFF),
            new Mode("resident", EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON),
                    ResidentMode.ON));

    /** An engine mode: how steps run, and whether the lm's decode steps run on resident tables. */
    private record Mode(String name, EngineProperties engine, ResidentMode resident) {
    }

    private ServingEfficiency() {
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        DriverOptions options = DriverOptions.parseOrExit("ServingEfficiency", args, "--device", "auto", "--batches",
                "1,8,32", "--tokens", "128", "--prompt-bytes", "32", "--rounds", "3", "--warmup", "20", "--modes",
                MODES.stream().map(Mode::name).collect(Collectors.joining(",")));
        int[] batches = options.integers("--batches", 1);
        int tokens = options.integer("--tokens", 1);
        int promptBytes = options.integer("--prompt-bytes", 1);
        int rounds = options.integer("--rounds", 1);
        Duration warmup = Duration.ofSeconds(options.integer("--warmup", 0));
        List<String> names = List.of(options.get("--modes").split(","));
        List<Mode> modes = MODES.stream().filter(m -> names.contains(m.name())).toList();
        if (modes.size() != names.size()) {
            throw new IllegalArgumentException("--modes takes some of " + MODES.stream().map(Mode::name).toList()
                    + ", not " + names);
        }
        boolean cuda = options.cuda("--device");
        Supplier<Device> devices = () -> cuda ? new CudaDevice(0) : new HostDevice(HostDevice.NAME, 256L << 20);
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        int pageSize = 16;
        int pagesPerRequest = (promptBytes + tokens + pageSize) / pageSize + 1;
        KvCacheConfig kv = new KvCacheConfig(pageSize, maxBatch * pagesPerRequest);
        DeploymentConfig deployment = DeploymentConfig.parse("""
                models:
                  - name: %s
                    kv_cache: {page_size: %d, max_num_pages: %d}
                    node_groups:
                      - node_names: [%s]
                        workers: [0]
                      - node_names: [%s]
                        workers: [1]
                """.formatted(ToyTtsModel.NAME, kv.pageSize(), kv.maxNumPages(), ToyTtsModel.LM, ToyTtsModel.CODEC),
                "ServingEfficiency");
        List<WorkerGraph> graphs = WorkerGraphSplit.split(deployment, Map.of(ToyTtsModel.NAME, ToyTtsModel.graph()));
        // The arenas are shared memory wherever the host has it, as in the service.
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) ? Files.createTempDirectory(shm, "mstar-serving-efficiency-")
                : Files.createTempDirectory("mstar-serving-efficiency-");

        Map<Integer, double[]> results = new LinkedHashMap<>();
        List<Cluster> clusters = new ArrayList<>();
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (Device device = devices.get()) {
            LmBackend backend = cuda ? new CudaLmBackend((CudaDevice) device, weights) : new HostLmBackend(weights);
            System.out.printf(Locale.ROOT, "toy-tts serving efficiency: device %s, lm on %s, codec on %s, prompt %d "
                    + "bytes, %d tokens per request, best of %d rounds after %d s of warm-up rounds per batch%n",
                    device.name(), LM_WORKER.value(), CODEC_WORKER.value(), promptBytes, tokens, rounds,
                    warmup.toSeconds());
            try (KvCache cache = new KvCache(device, kv, ToyTtsWeights.BYTES_PER_TOKEN)) {
                Set<Long> claimedStepThreads = new HashSet<>();
                for (Mode mode : modes) {
                    clusters.add(new Cluster(mode, base.resolve(mode.name()), graphs, deployment, devices,
                            claimedStepThreads));
                }
                List<Way> ways = new ArrayList<>();
                ways.add(new Way("kernel-only", (b, r) -> ToyTtsDecode.round(device, backend, cache, b, promptBytes,
                        tokens, r).tokensPerSecond()));
                for (Cluster c : clusters) {
                    ways.add(new Way(c.name, (b, r) -> c.round(b, promptBytes, tokens, r)));
                }
                // Every way at every batch once before any is timed: the JIT compiles each path's code then, not on
                // the second core while a later way is measured (a short run's ratios otherwise rank the ways by the
                // order they ran in).
                int[] untimed = {0}; // untimed rounds count down from -1: request ids carry the round
                for (int b : batches) {
                    for (Way way : ways) {
                        way.round().tokensPerSecond(b, --untimed[0]);
                    }
                }
                for (int b : batches) {
                    double[] row = best(warmup, rounds, b, ways, () -> --untimed[0]);
                    for (int w = 0; w < ways.size(); w++) {
                        System.out.printf(Locale.ROOT, "batch %d: %-12s %10.0f tokens/s  %.3f of kernel-only%n", b,
                                ways.get(w).name(), row[w], row[w] / row[0]);
                    }
                    results.put(b, row);
                }
            } finally {
                closeAll(clusters);
                if (backend instanceof CudaLmBackend c) {
                    c.close();
                }
            }
        } finally {
            try (Stream<Path> left = Files.walk(base)) {
                left.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
        System.out.println();
        StringBuilder head = new StringBuilder("| batch | kernel-only tokens/s |");
        StringBuilder rule = new StringBuilder("|---:|---:|");
        for (Mode mode : modes) {
            head.append(' ').append(mode.name()).append(" tokens/s (ratio) |");
            rule.append("---:|");
        }
        System.out.println(head);
        System.out.println(rule);
        results.forEach((b, r) -> {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %d | %.0f |", b, r[0]));
            for (int m = 1; m < r.length; m++) {
                line.append(String.format(Locale.ROOT, " %.0f (%.3f) |", r[m], r[m] / r[0]));
            }
            System.out.println(line);
        });
        System.out.println();
        System.out.println("Where the lm worker's time went in each mode's best round:");
        for (int b : results.keySet()) {
            for (Cluster c : clusters) {
                System.out.printf(Locale.ROOT, "batch %d: %-12s %s%n", b, c.name, c.bestSteps.get(b).describe());
            }
        }
    }

    /** One round at a batch size; negative rounds are untimed, and no round number is used twice. */
    private interface Round {
        double tokensPerSecond(int batch, int round) throws Exception;
    }

    /** The kernels alone, or the engine in one mode. */
    private record Way(String name, Round round) {
    }

    /**
     * The best tokens/s of each way at {@code batch} over {@code rounds}, the ways taking turns round by round so a
     * spell of load on the machine falls on all of them alike; untimed rounds of all of them in turns for
     * {@code warmup} first (at least one each), numbered by {@code untimed}.
     */
    private static double[] best(Duration warmup, int rounds, int batch, List<Way> ways, IntSupplier untimed)
            throws Exception {
        long until = System.nanoTime() + warmup.toNanos();
        do {
            for (Way way : ways) {
                way.round().tokensPerSecond(batch, untimed.getAsInt());
            }
        } while (System.nanoTime() < until);
        double[] best = new double[ways.size()];
        for (int r = 0; r < rounds; r++) {
            for (int w = 0; w < ways.size(); w++) {
                best[w] = Math.max(best[w], ways.get(w).round().tokensPerSecond(batch, r));
            }
        }
        return best;
    }

    /** Closes every one, also after a failure, and throws the first failure. */
    private static void closeAll(List<? extends AutoCloseable> all) {
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

    /**
     * Prompt byte {@code i} of request {@code r}: the engine's prefill feeds {@code [BOS, bytes but the last]} and the
     * first decode step the last, the very tokens {@link ToyTtsDecode#round} feeds.
     */
    private static int promptByte(int r, int i, int promptBytes) {
        return i == promptBytes - 1 ? 'a' + r % 26 : 'a' + ((i + 1) * 7 + r) % 26;
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

    /**
     * The lm worker's batches over a round: how many, how many requests in each on average, and the kernels' share
     * of the round's decode time (their time over it; prefill and the round's tail are in the former, not the
     * latter, so this is an upper bound). A share well under 1 means the device waited for the engine.
     */
    record LmSteps(long batches, double requests, double kernelSeconds, double roundSeconds, double loopCpuSeconds,
            double stepCpuSeconds) {

        static LmSteps of(SimpleMeterRegistry registry, List<Long> threads) {
            long batches = 0;
            double requests = 0;
            for (var s : registry.find("mstar.worker.batch.size").tag("node", ToyTtsModel.LM).summaries()) {
                batches += s.count();
                requests += s.totalAmount();
            }
            double kernel = registry.find("mstar.worker.step").tag("node", ToyTtsModel.LM).timers().stream()
                    .mapToDouble(t -> t.totalTime(TimeUnit.SECONDS)).sum();
            ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
            double loop = threads.isEmpty() ? 0 : cpu.getThreadCpuTime(threads.get(0)) / 1e9;
            double step = threads.size() < 2 ? 0 : cpu.getThreadCpuTime(threads.get(1)) / 1e9;
            return new LmSteps(batches, requests, kernel, 0, loop, step);
        }

        LmSteps minus(LmSteps before, long roundNanos) {
            return new LmSteps(batches - before.batches, requests - before.requests,
                    kernelSeconds - before.kernelSeconds, roundNanos / 1e9, loopCpuSeconds - before.loopCpuSeconds,
                    stepCpuSeconds - before.stepCpuSeconds);
        }

        /** The CPU times span the whole round (prefill and teardown too), so they read as upper bounds as well. */
        String describe() {
            double perBatch = 1e6 / Math.max(1, batches);
            return String.format(Locale.ROOT, "%d lm batches, %.1f requests each, %.0f µs kernel per batch, "
                    + "kernel %.2f of the round; CPU per batch: loop %.0f µs, step thread %.0f µs", batches,
                    requests / Math.max(1, batches), kernelSeconds * perBatch, kernelSeconds / roundSeconds,
                    loopCpuSeconds * perBatch, stepCpuSeconds * perBatch);
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

    /**
     * The two workers of one engine mode and the conductor's side of them: a store and tensor server for the prompts
     * (a data plane built as a worker's is) and the policy, run on the driver thread.
     */
    private static final class Cluster implements AutoCloseable {
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

        Cluster(Mode mode, Path arena, List<WorkerGraph> graphs, DeploymentConfig deployment,
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
    }
}
