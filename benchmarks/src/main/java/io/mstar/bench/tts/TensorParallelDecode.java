package io.mstar.bench.tts;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.TensorParallelLmBackend;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.TokenSampler;
import io.mstar.worker.tp.TensorParallelSampling;

/**
 * toy-tts decode on host devices, the lm on one rank (TP1: {@link HostLmBackend}) against a tensor-parallel group of
 * two ranks (TP2: a {@link TensorParallelLmBackend} per rank, each on its own thread, device and KV cache, meeting in
 * a {@link SharedMemoryCollective}; rank 0 samples and broadcasts, {@link TensorParallelSampling}), the same requests
 * and tokens (checked), in turns round by round in one process. Reports decode tokens/s per batch size, TP2 / TP1,
 * and rank 0's time per step inside the collective (all-gathers and the broadcast, waits for the peer included).
 * The engine and the transport are not in it: this is the kernels' side of a worker's step.
 *
 * <p>Options: {@code --batches 1,8,32}, {@code --tokens 64}, {@code --prompt-bytes 32}, {@code --rounds 3} (timed
 * rounds per batch and way, taken in turns; the best is kept), {@code --verbose}.
 */
public final class TensorParallelDecode {

    private TensorParallelDecode() {
    }

    /** One way's best round at one batch size: decode tokens/s, ms per step, collective ms per step. */
    record Result(double tokensPerSecond, double stepMs, double collectiveMs) {
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        DriverOptions options = DriverOptions.parseOrExit("TensorParallelDecode", args, "--batches", "1,8,32",
                "--tokens", "64", "--prompt-bytes", "32", "--rounds", "3");
        int[] batches = options.integers("--batches", 1);
        int tokens = options.integer("--tokens", 1);
        int promptBytes = options.integer("--prompt-bytes", 1);
        int rounds = options.integer("--rounds", 1);
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        int pageSize = 16;
        KvCacheConfig config = new KvCacheConfig(pageSize, maxBatch * ((promptBytes + tokens + pageSize) / pageSize + 1));
        ToyTtsWeights weights = ToyTtsWeights.generate();
        Path dir = Files.createTempDirectory("mstar-tp-bench");
        System.out.printf(Locale.ROOT, "toy-tts decode on host, TP1 vs TP2: %d tokens per request, prompt %d bytes, "
                + "%d rounds per way and batch, %d cores%n", tokens, promptBytes, rounds,
                Runtime.getRuntime().availableProcessors());
        // one thread per rank, as each worker has its step thread: a rank's KV cache checks that it is its owner's
        List<ExecutorService> threads = List.of(Executors.newSingleThreadExecutor(), Executors.newSingleThreadExecutor());
        List<Rank> tp2 = new ArrayList<>();
        try (HostDevice one = new HostDevice("tp1", 256L << 20);
                KvCache oneCache = new KvCache(one, config, ToyTtsWeights.BYTES_PER_TOKEN)) {
            HostLmBackend tp1 = new HostLmBackend(weights);
            Path file = dir.resolve("mstar-collective.bench");
            List<Future<Rank>> joins = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                joins.add(threads.get(r).submit(() -> Rank.open(weights, config, file, rank)));
            }
            for (Future<Rank> f : joins) {
                tp2.add(f.get());
            }
            System.out.println();
            System.out.println("| batch | TP1 tokens/s | TP2 tokens/s | TP2 / TP1 | TP1 ms/step | TP2 ms/step "
                    + "| TP2 collective ms/step |");
            System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
            for (int b : batches) {
                Result best1 = null;
                Result best2 = null;
                for (int r = -1; r < rounds; r++) { // round -1 warms up both ways
                    Outcome o1 = run(one, tp1, oneCache, null, b, promptBytes, tokens);
                    List<Future<Outcome>> ranks = new ArrayList<>();
                    for (int k = 0; k < tp2.size(); k++) {
                        Rank rank = tp2.get(k);
                        ranks.add(threads.get(k).submit(() -> run(rank.device, rank.backend, rank.cache, rank, b,
                                promptBytes, tokens)));
                    }
                    Outcome o2 = ranks.get(0).get();
                    if (!Arrays.equals(ranks.get(1).get().tokens, o2.tokens) || !Arrays.equals(o1.tokens, o2.tokens)) {
                        throw new IllegalStateException("TP2 and TP1 sampled different tokens at batch " + b);
                    }
                    if (r >= 0) {
                        best1 = best1 == null || o1.result.tokensPerSecond() > best1.tokensPerSecond() ? o1.result : best1;
                        best2 = best2 == null || o2.result.tokensPerSecond() > best2.tokensPerSecond() ? o2.result : best2;
                    }
                }
                System.out.printf(Locale.ROOT, "| %d | %.0f | %.0f | %.2f | %.3f | %.3f | %.3f |%n", b,
                        best1.tokensPerSecond(), best2.tokensPerSecond(),
                        best2.tokensPerSecond() / best1.tokensPerSecond(), best1.stepMs(), best2.stepMs(),
                        best2.collectiveMs());
            }
        } finally {
            for (int k = 0; k < tp2.size(); k++) {
                threads.get(k).submit(tp2.get(k)::close).get();
            }
            threads.forEach(ExecutorService::shutdownNow);
        }
    }

    /** One rank of the TP2 group: its device, KV cache, backend and (timed) collective. */
    static final class Rank {
        final HostDevice device;
        final KvCache cache;
        final TimedCollective collective;
        final TensorParallelLmBackend backend;
        final TensorParallelSampling sampling;

        private Rank(HostDevice device, KvCache cache, TimedCollective collective, TensorParallelLmBackend backend) {
            this.device = device;
            this.cache = cache;
            this.collective = collective;
            this.backend = backend;
            this.sampling = new TensorParallelSampling(collective, device);
        }

        static Rank open(ToyTtsWeights weights, KvCacheConfig config, Path file, int rank) {
            HostDevice device = new HostDevice("tp2-rank-" + rank, 256L << 20);
            TimedCollective c = new TimedCollective(SharedMemoryCollective.join(new SharedMemoryCollectiveSettings(
                    file, rank, 2, SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES, Duration.ofSeconds(30))));
            TensorParallelLmBackend backend = new TensorParallelLmBackend(weights, c, device);
            return new Rank(device, new KvCache(device, config, backend.bytesPerToken()), c, backend);
        }

        Void close() {
            backend.close();
            cache.close();
            collective.close();
            device.close();
            return null;
        }
    }

    record Outcome(Result result, int[] tokens) {
    }

    /**
     * {@link ToyTtsDecode#round}'s workload: B requests prefilled together then decoded {@code tokens} steps as one
     * batch per step, each sampled as {@link ToyTtsDecode#draw} does; on a TP2 rank ({@code rank} not null) rank 0 draws and
     * broadcasts. Answers the timing and the last step's tokens.
     */
    static Outcome run(HostDevice device, LmBackend backend, KvCache cache, Rank rank, int batch, int promptBytes,
            int tokens) {
        TokenSampler sampler = new TokenSampler();
        List<String> ids = new ArrayList<>();
        int[] last = new int[batch];
        backend.run(device, cache.pool(), cache.layout(), ToyTtsDecode.prefill(cache, "bench-", batch, promptBytes, ids,
                last));
        long collectiveBefore = rank == null ? 0 : rank.collective.nanos;
        long t1 = System.nanoTime();
        for (int step = 0; step < tokens; step++) {
            List<LmJob> jobs = ToyTtsDecode.decodeStep(cache, ids, last);
            float[][] logits = backend.run(device, cache.pool(), cache.layout(), jobs);
            TensorParallelSampling.Draw draw = (r, row) -> ToyTtsDecode.draw(sampler, row, r, jobs.get(r));
            if (rank == null) {
                for (int r = 0; r < batch; r++) {
                    last[r] = draw.draw(r, logits[r]);
                }
            } else {
                last = rank.sampling.sample(logits, draw);
            }
        }
        long t2 = System.nanoTime();
        ids.forEach(cache::releaseRequest);
        double seconds = (t2 - t1) / 1e9;
        double collectiveMs = rank == null ? 0 : (rank.collective.nanos - collectiveBefore) / 1e6 / tokens;
        return new Outcome(new Result(batch * (double) tokens / seconds, (t2 - t1) / 1e6 / tokens, collectiveMs), last);
    }

    /** A collective that sums the time its calls take on the calling (rank's) thread. */
    static final class TimedCollective implements Collective {
        private final Collective inner;
        long nanos;

        TimedCollective(Collective inner) {
            this.inner = inner;
        }

        @Override
        public int rank() {
            return inner.rank();
        }

        @Override
        public int size() {
            return inner.size();
        }

        @Override
        public void allReduceSum(DeviceBuffer buffer, long offset, int floats) {
            long t = System.nanoTime();
            inner.allReduceSum(buffer, offset, floats);
            nanos += System.nanoTime() - t;
        }

        @Override
        public void broadcast(DeviceBuffer buffer, long offset, long bytes) {
            long t = System.nanoTime();
            inner.broadcast(buffer, offset, bytes);
            nanos += System.nanoTime() - t;
        }

        @Override
        public void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
            long t = System.nanoTime();
            inner.allGather(in, inOffset, out, outOffset, bytesPerRank);
            nanos += System.nanoTime() - t;
        }

        @Override
        public void barrier() {
            inner.barrier();
        }

        @Override
        public void abort() {
            inner.abort();
        }

        @Override
        public void close() {
            inner.close();
        }
    }
}
