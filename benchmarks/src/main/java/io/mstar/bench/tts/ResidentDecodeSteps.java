package io.mstar.bench.tts;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.CudaEvent;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.ToyTtsLmKernel;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.KvCacheLayout;
import io.mstar.worker.kv.TokenSampler;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.resident.ResidentStats;

/**
 * Microseconds per toy-tts decode step through the {@code lm} kernel, eager against on resident tables
 * (docs/resident-planning.md), at each batch size, in the same run on the same device: per batch size B, B requests
 * are prefilled, then {@code --steps} decode steps run as one batch each (temperature 0.8, top-k 40, EOS masked), the
 * two kernels taking turns round by round; the best round of each is kept. A step here is what the engine's step
 * thread runs: reading each call's state, the forward, sampling, and the output tensors. Reports both and the ratio
 * eager / resident (above 1: the captured step is faster).
 *
 * <p>Options: {@code --device host|cuda|auto} (auto: CUDA when a GPU is visible), {@code --batches 1,2,4,8,16,32},
 * {@code --steps 64}, {@code --prompt-bytes 32}, {@code --rounds 3}, {@code --warmup 10} (seconds of untimed rounds
 * at every batch size before the first is timed), {@code --verbose}.
 */
public final class ResidentDecodeSteps {

    private ResidentDecodeSteps() {
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        DriverOptions options = DriverOptions.parseOrExit("ResidentDecodeSteps", args, "--device", "auto", "--batches",
                "1,2,4,8,16,32", "--steps", "64", "--prompt-bytes", "32", "--rounds", "3", "--warmup", "10");
        int[] batches = options.integers("--batches", 1);
        int steps = options.integer("--steps", 1);
        int promptBytes = options.integer("--prompt-bytes", 1);
        int rounds = options.integer("--rounds", 1);
        Duration warmup = Duration.ofSeconds(options.integer("--warmup", 0));
        boolean cuda = options.cuda("--device");
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        int pageSize = 16;
        int pagesPerRequest = (promptBytes + (rounds + 2) * steps + pageSize) / pageSize + 1; // warm-up, rounds, split
        KvCacheConfig config = new KvCacheConfig(pageSize, maxBatch * pagesPerRequest);
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (Device device = cuda ? new CudaDevice(0) : new HostDevice(HostDevice.NAME, 512L << 20)) {
            Supplier<LmBackend> backend = cuda ? () -> new CudaLmBackend((CudaDevice) device, weights)
                    : () -> new HostLmBackend(weights);
            TimedForward timed = new TimedForward(device, backend);
            System.out.printf(Locale.ROOT, "toy-tts decode steps, eager vs resident: device %s, prompt %d bytes, "
                    + "%d steps per round, best of %d rounds, after %d s of warm-up rounds at every batch size%n",
                    device.name(), promptBytes, steps, rounds, warmup.toSeconds());
            System.out.printf(Locale.ROOT, "a 2-int tensor: %.1f µs to write (allocate and copy in), %.1f µs to read "
                    + "(copy out); a step of B requests reads B and writes 3B of them%n", Int32Io.write(device),
                    Int32Io.read(device));
            System.out.println();
            System.out.println("| batch | eager µs/step | resident µs/step | eager / resident | resident: plan | upload "
                    + "| replay | advance |");
            System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            List<String> splits = new ArrayList<>();
            ToyTtsLmKernel eager = new ToyTtsLmKernel(timed);
            ToyTtsLmKernel resident = new ToyTtsLmKernel(backend, ResidentSettings.of(ResidentMode.ON), registry);
            try (KvCache eagerCache = new KvCache(device, config, ToyTtsWeights.BYTES_PER_TOKEN);
                    KvCache residentCache = new KvCache(device, config, ToyTtsWeights.BYTES_PER_TOKEN)) {
                // The JIT compiles a step's code after thousands of calls: untimed rounds of both kernels at every
                // batch size first, each on fresh requests, so that the first batch size is not timed half-compiled.
                long deadline = System.nanoTime() + warmup.toNanos();
                do {
                    for (int b : batches) {
                        for (Batch w : List.of(new Batch(device, eager, eagerCache, b, promptBytes),
                                new Batch(device, resident, residentCache, b, promptBytes))) {
                            w.steps(steps);
                            w.close();
                        }
                    }
                } while (System.nanoTime() < deadline);
                for (int b : batches) {
                    Batch e = new Batch(device, eager, eagerCache, b, promptBytes);
                    Batch r = new Batch(device, resident, residentCache, b, promptBytes);
                    e.steps(steps); // warm-up (and the resident kernel's captures)
                    r.steps(steps);
                    timed.timing(false);
                    double bestEager = Double.MAX_VALUE;
                    double bestResident = Double.MAX_VALUE;
                    PhaseTimes phases = new PhaseTimes(registry);
                    for (int round = 0; round < rounds; round++) {
                        bestEager = Math.min(bestEager, e.steps(steps));
                        bestResident = Math.min(bestResident, r.steps(steps));
                    }
                    timed.timing(true);
                    double split = e.steps(steps);
                    splits.add(String.format(Locale.ROOT, "| %d | %.1f | %s | %.1f |", b, split, timed.since(steps),
                            split - timed.wallMicros(steps)));
                    e.close();
                    r.close();
                    System.out.printf(Locale.ROOT, "| %d | %.1f | %.1f | %.2f | %s |%n", b, bestEager, bestResident,
                            bestEager / bestResident, phases.since());
                }
                System.out.println();
                System.out.println("The eager step split, from one more round timed by part (recording the events "
                        + "costs host time, so this round is not in the table above):");
                System.out.println();
                System.out.println("| batch | eager µs/step | forward call (job table in, launch, logits back) "
                        + "| of it on the device | the rest: states, sampling, outputs |");
                System.out.println("|---:|---:|---:|---:|---:|");
                splits.forEach(System.out::println);
            } finally {
                eager.close();
                resident.close();
            }
        }
    }

    /**
     * The eager kernel's backend, timing each forward call when asked: its wall time and, on CUDA, the device's time
     * from before the job table's copy in to after the logits' copy out (two events around the call).
     */
    private static final class TimedForward implements Supplier<LmBackend> {
        final Device device;
        final Supplier<LmBackend> factory;
        boolean on;
        long wallNanos;
        double deviceMicros;

        TimedForward(Device device, Supplier<LmBackend> factory) {
            this.device = device;
            this.factory = factory;
        }

        void timing(boolean on) {
            this.on = on;
            wallNanos = 0;
            deviceMicros = 0;
        }

        double wallMicros(int steps) {
            return wallNanos / 1e3 / steps;
        }

        String since(int steps) {
            return String.format(Locale.ROOT, "%.1f | %s", wallMicros(steps), device instanceof CudaDevice
                    ? String.format(Locale.ROOT, "%.1f", deviceMicros / steps) : "–");
        }

        @Override
        public LmBackend get() {
            return new Timed(factory.get());
        }

        private final class Timed implements LmBackend, AutoCloseable {
            final LmBackend inner;

            Timed(LmBackend inner) {
                this.inner = inner;
            }

            @Override
            public float[][] run(Device on, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs) {
                if (!TimedForward.this.on) {
                    return inner.run(on, pool, layout, jobs);
                }
                CudaDevice cuda = device instanceof CudaDevice c ? c : null;
                try (CudaEvent before = cuda == null ? null : cuda.recordEvent()) {
                    long start = System.nanoTime();
                    float[][] logits = inner.run(on, pool, layout, jobs);
                    wallNanos += System.nanoTime() - start;
                    if (cuda != null) {
                        try (CudaEvent after = cuda.recordEvent()) {
                            after.synchronize();
                            deviceMicros += after.elapsedMillisSince(before) * 1e3;
                        }
                    }
                    return logits;
                }
            }

            @Override
            public void close() throws Exception {
                if (inner instanceof AutoCloseable closeable) {
                    closeable.close();
                }
            }
        }
    }

    /** The resident kernel's mean µs per phase over the timed rounds (every round, not only the best). */
    private static final class PhaseTimes {
        final SimpleMeterRegistry registry;
        final Map<ResidentStats.Phase, double[]> at = new EnumMap<>(ResidentStats.Phase.class);

        PhaseTimes(SimpleMeterRegistry registry) {
            this.registry = registry;
            for (ResidentStats.Phase p : ResidentStats.Phase.values()) {
                Timer t = timer(p);
                at.put(p, new double[] {t == null ? 0 : t.count(), t == null ? 0 : t.totalTime(TimeUnit.MICROSECONDS)});
            }
        }

        Timer timer(ResidentStats.Phase p) {
            return registry.find("mstar.worker.resident.step").tag("phase", p.name().toLowerCase(Locale.ROOT)).timer();
        }

        String since() {
            StringBuilder out = new StringBuilder();
            for (ResidentStats.Phase p : ResidentStats.Phase.values()) {
                Timer t = timer(p);
                double n = t == null ? 0 : t.count() - at.get(p)[0];
                double us = t == null ? 0 : t.totalTime(TimeUnit.MICROSECONDS) - at.get(p)[1];
                out.append(out.isEmpty() ? "" : " | ").append(n == 0 ? "–" : String.format(Locale.ROOT, "%.1f", us / n));
            }
            return out.toString();
        }
    }

    /** What one small tensor costs to make and to read on the device: the kernel's per-request I/O. */
    private static final class Int32Io {
        static final int N = 2000;

        static double write(Device device) {
            for (int i = 0; i < N; i++) {
                device.free(Int32Tensors.write(device, new int[] {i, i}).buffer());
            }
            long start = System.nanoTime();
            for (int i = 0; i < N; i++) {
                device.free(Int32Tensors.write(device, new int[] {i, i}).buffer());
            }
            return (System.nanoTime() - start) / 1e3 / N;
        }

        static double read(Device device) {
            Tensor t = Int32Tensors.write(device, new int[] {1, 2});
            try {
                long sum = 0;
                for (int i = 0; i < N; i++) {
                    sum += Int32Tensors.read(device, t)[0];
                }
                long start = System.nanoTime();
                for (int i = 0; i < N; i++) {
                    sum += Int32Tensors.read(device, t)[1];
                }
                double us = (System.nanoTime() - start) / 1e3 / N;
                if (sum != 3L * N) {
                    throw new IllegalStateException("read back " + sum);
                }
                return us;
            } finally {
                device.free(t.buffer());
            }
        }
    }

    /** B requests of one kernel, prefilled, decoded step after step. */
    private static final class Batch {
        final Device device;
        final ToyTtsLmKernel kernel;
        final KvCache cache;
        final TokenSampler sampler = new TokenSampler();
        final SamplingConfig sampling = new SamplingConfig(null, 0.8, 40, 1.0, true, 1.0, 0L);
        final List<String> ids = new ArrayList<>();
        final List<Tensor> states = new ArrayList<>();

        Batch(Device device, ToyTtsLmKernel kernel, KvCache cache, int batch, int promptBytes) {
            this.device = device;
            this.kernel = kernel;
            this.cache = cache;
            List<NodeCall> calls = new ArrayList<>();
            List<KvStep> steps = new ArrayList<>();
            List<Tensor> prompts = new ArrayList<>();
            for (int r = 0; r < batch; r++) {
                String id = "bench-" + System.identityHashCode(this) + "-" + r;
                ids.add(id);
                cache.addRequest(id);
                ByteBuffer bytes = ByteBuffer.allocateDirect(promptBytes);
                for (int i = 0; i < promptBytes; i++) {
                    bytes.put((byte) ('a' + (i * 7 + r) % 26));
                }
                Tensor text = new Tensor(DeviceUploads.upload(device, bytes.flip()), ToyTtsModel.INPUT_DTYPE,
                        List.of((long) promptBytes));
                prompts.add(text);
                calls.add(call(id, Map.of(ToyTtsModel.TEXT_INPUT, text)));
                steps.add(reserve(id, promptBytes));
            }
            for (NodeResult result : kernel.forward(device, calls, steps)) {
                states.add(result.outputs().get(ToyTtsModel.STATE));
            }
            prompts.forEach(t -> device.free(t.buffer()));
        }

        /** Runs {@code n} decode steps of the whole batch; answers µs per step. */
        double steps(int n) {
            long start = System.nanoTime();
            for (int s = 0; s < n; s++) {
                List<NodeCall> calls = new ArrayList<>(ids.size());
                List<KvStep> steps = new ArrayList<>(ids.size());
                for (int r = 0; r < ids.size(); r++) {
                    calls.add(call(ids.get(r), Map.of(ToyTtsModel.STATE, states.get(r))));
                    steps.add(reserve(ids.get(r), 1));
                }
                List<NodeResult> results = kernel.forward(device, calls, steps);
                for (int r = 0; r < ids.size(); r++) {
                    NodeResult result = results.get(r);
                    if (result.failed()) {
                        throw new IllegalStateException("decode failed: " + result);
                    }
                    device.free(states.get(r).buffer());
                    result.outputs().forEach((name, t) -> {
                        if (!name.equals(ToyTtsModel.STATE)) {
                            device.free(t.buffer());
                        }
                    });
                    states.set(r, result.outputs().get(ToyTtsModel.STATE));
                }
            }
            return (System.nanoTime() - start) / 1e3 / n;
        }

        KvStep reserve(String id, int n) {
            int first = cache.appendTokens(id, n);
            return new KvStep(id, cache.pool(), cache.layout(), cache.pages(id), first, n, sampling, 1000L + ids.indexOf(id),
                    sampler, cache.residentLease(id));
        }

        NodeCall call(String id, Map<String, Tensor> inputs) {
            return new NodeCall(id, inputs, new CurrentForwardPassInfo(id, ToyTtsModel.DECODE, false, 0, 0L,
                    1 << 20), new NestedLoopIndices(List.of(), Map.of(), 0));
        }

        void close() {
            states.forEach(t -> device.free(t.buffer()));
            ids.forEach(cache::releaseRequest);
        }
    }
}
