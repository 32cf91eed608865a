package io.mstar.bench.tts;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.worker.engine.EngineLoop;
import io.mstar.worker.engine.EngineProperties;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.resident.ResidentMode;
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
    record Mode(String name, EngineProperties engine, ResidentMode resident) {
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
        List<ServingCluster> clusters = new ArrayList<>();
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (Device device = devices.get()) {
            LmBackend backend = cuda ? new CudaLmBackend((CudaDevice) device, weights) : new HostLmBackend(weights);
            System.out.printf(Locale.ROOT, "toy-tts serving efficiency: device %s, lm on %s, codec on %s, prompt %d "
                    + "bytes, %d tokens per request, best of %d rounds after %d s of warm-up rounds per batch%n",
                    device.name(), ServingCluster.LM_WORKER.value(), ServingCluster.CODEC_WORKER.value(), promptBytes,
                    tokens, rounds, warmup.toSeconds());
            try (KvCache cache = new KvCache(device, kv, ToyTtsWeights.BYTES_PER_TOKEN)) {
                Set<Long> claimedStepThreads = new HashSet<>();
                for (Mode mode : modes) {
                    clusters.add(new ServingCluster(mode, base.resolve(mode.name()), graphs, deployment, devices,
                            claimedStepThreads));
                }
                List<Way> ways = new ArrayList<>();
                ways.add(new Way("kernel-only", (b, r) -> ToyTtsDecode.round(device, backend, cache, b, promptBytes,
                        tokens, r).tokensPerSecond()));
                for (ServingCluster c : clusters) {
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
                ServingCluster.closeAll(clusters);
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
            for (ServingCluster c : clusters) {
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

}
