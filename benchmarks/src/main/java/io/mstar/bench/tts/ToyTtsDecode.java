package io.mstar.bench.tts;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.TokenSampler;

/**
 * toy-tts decode throughput on one device: for each batch size B, B requests are prefilled together, then decoded
 * {@code --tokens} steps as one batch per step, exactly as the worker's {@code lm} kernel does it: a backend call
 * over the paged KV cache (every request its own page table), then per request a seeded sample
 * ({@link TokenSampler}, temperature 0.8, top-k 40, EOS masked so every request runs to the end). Reports decode
 * tokens/s = B * tokens / decode wall time, after a warm-up round per B; the engine, tensor transport and
 * Kafka are not in it (those are TransitionLatency's).
 *
 * <p>Options: {@code --device host|cuda|auto} (auto: CUDA when a GPU is visible), {@code --batches 1,8,32},
 * {@code --tokens 128}, {@code --prompt-bytes 32}, {@code --rounds 3} (timed rounds per batch; the best is kept),
 * {@code --verbose} (INFO logging, see {@link DriverLogging}).
 */
public final class ToyTtsDecode {

    private ToyTtsDecode() {
    }

    record Result(int batch, double prefillMs, double stepMs, double tokensPerSecond) {
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        DriverOptions options = DriverOptions.parseOrExit("ToyTtsDecode", args, "--device", "auto", "--batches",
                "1,8,32", "--tokens", "128", "--prompt-bytes", "32", "--rounds", "3");
        int[] batches = options.integers("--batches", 1);
        int tokens = options.integer("--tokens", 1);
        int promptBytes = options.integer("--prompt-bytes", 1);
        int rounds = options.integer("--rounds", 1);
        boolean cuda = options.cuda("--device");
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        int pageSize = 16;
        int pagesPerRequest = (promptBytes + tokens + pageSize) / pageSize + 1;
        KvCacheConfig config = new KvCacheConfig(pageSize, maxBatch * pagesPerRequest);
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (Device device = cuda ? new CudaDevice(0) : new HostDevice(HostDevice.NAME, 256L << 20)) {
            LmBackend backend = cuda ? new CudaLmBackend((CudaDevice) device, weights) : new HostLmBackend(weights);
            String kernels = cuda ? "CUDA (toy_tts_kernels.cu)" : "Java (HostLmBackend)";
            System.out.printf(Locale.ROOT, "toy-tts decode: device %s, kernels %s, d_model %d, %d layers, %d heads, "
                    + "vocab %d, prompt %d bytes, %d tokens per request%n", device.name(), kernels, ToyTtsWeights.D,
                    ToyTtsWeights.LAYERS, ToyTtsWeights.HEADS, ToyTtsWeights.VOCAB, promptBytes, tokens);
            List<Result> results = new ArrayList<>();
            try (KvCache cache = new KvCache(device, config, ToyTtsWeights.BYTES_PER_TOKEN)) {
                for (int b : batches) {
                    round(device, backend, cache, b, promptBytes, tokens, -1); // warm-up
                    Result best = null;
                    for (int r = 0; r < rounds; r++) {
                        Result res = round(device, backend, cache, b, promptBytes, tokens, r);
                        if (best == null || res.tokensPerSecond() > best.tokensPerSecond()) {
                            best = res;
                        }
                    }
                    results.add(best);
                }
            } finally {
                if (backend instanceof CudaLmBackend c) {
                    c.close();
                }
            }
            System.out.println();
            System.out.println("| batch | decode tokens/s | ms per decode step | prefill ms |");
            System.out.println("|---:|---:|---:|---:|");
            for (Result r : results) {
                System.out.printf(Locale.ROOT, "| %d | %.0f | %.3f | %.2f |%n", r.batch(), r.tokensPerSecond(),
                        r.stepMs(), r.prefillMs());
            }
        }
    }

    /** One timed round at batch {@code batch} (also {@link ServingEfficiency}'s kernel-only baseline). */
    static Result round(Device device, LmBackend backend, KvCache cache, int batch, int promptBytes, int tokens,
            int round) {
        TokenSampler sampler = new TokenSampler();
        List<String> ids = new ArrayList<>();
        int[] last = new int[batch];
        List<LmJob> prefill = prefill(cache, "bench-" + round + "-", batch, promptBytes, ids, last);
        long t0 = System.nanoTime();
        backend.run(device, cache.pool(), cache.layout(), prefill);
        long t1 = System.nanoTime();
        for (int step = 0; step < tokens; step++) {
            List<LmJob> jobs = decodeStep(cache, ids, last);
            float[][] logits = backend.run(device, cache.pool(), cache.layout(), jobs);
            for (int r = 0; r < batch; r++) {
                last[r] = draw(sampler, logits[r], r, jobs.get(r));
            }
        }
        long t2 = System.nanoTime();
        ids.forEach(cache::releaseRequest);
        double decodeSeconds = (t2 - t1) / 1e9;
        return new Result(batch, (t1 - t0) / 1e6, (t2 - t1) / 1e6 / tokens, batch * (double) tokens / decodeSeconds);
    }

    /**
     * The round's requests, {@code prefix + r} for r below {@code batch}, added to {@code cache} (their ids into
     * {@code ids}) with their prefill jobs: {@code [BOS, promptBytes - 1 letters]}; the first decode token of each
     * goes into {@code last}.
     */
    static List<LmJob> prefill(KvCache cache, String prefix, int batch, int promptBytes, List<String> ids, int[] last) {
        List<LmJob> prefill = new ArrayList<>();
        for (int r = 0; r < batch; r++) {
            String id = prefix + r;
            ids.add(id);
            cache.addRequest(id);
            int[] feed = new int[promptBytes];
            feed[0] = ToyTtsModel.BOS;
            for (int i = 1; i < promptBytes; i++) {
                feed[i] = 'a' + (i * 7 + r) % 26;
            }
            last[r] = 'a' + r % 26;
            prefill.add(new LmJob(feed, cache.appendTokens(id, feed.length), cache.pages(id), false));
        }
        return prefill;
    }

    /** One decode step's jobs: each request feeds its last token at its next position. */
    static List<LmJob> decodeStep(KvCache cache, List<String> ids, int[] last) {
        List<LmJob> jobs = new ArrayList<>(ids.size());
        for (int r = 0; r < ids.size(); r++) {
            String id = ids.get(r);
            jobs.add(new LmJob(new int[] {last[r]}, cache.appendTokens(id, 1), cache.pages(id), true));
        }
        return jobs;
    }

    /**
     * Request {@code r}'s next token from its {@code row} of logits, EOS masked (ignore_eos, as the kernel does, so
     * every request runs to the end): temperature 0.8, top-k 40, seed {@code 1000 + r}. Masks {@code row} in place.
     */
    static int draw(TokenSampler sampler, float[] row, int r, LmJob job) {
        row[ToyTtsModel.EOS] = Float.NEGATIVE_INFINITY;
        return sampler.sample(row, SAMPLING, 1000L + r, job.sequenceLength() - 1L);
    }

    private static final SamplingConfig SAMPLING = new SamplingConfig(null, 0.8, 40, 1.0, true, 1.0, 0L);
}
