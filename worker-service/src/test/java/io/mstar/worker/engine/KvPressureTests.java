package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.DoubleSupplier;

import org.junit.jupiter.api.Test;

import io.mstar.request.SamplingConfig;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.ModelKernels;

/**
 * KV pressure on the toy model of {@link KvCacheEngineTests} (docs/streaming-and-kv.md#offload-and-reload): twice as
 * many requests as the 10 device pages hold at once. Pages are admitted, offloaded to the host pool and reloaded, and
 * every request completes with exactly the tokens the model predicts for it alone; afterwards every page, on the
 * device and in the host pool, is free.
 */
class KvPressureTests extends ToyLmWorkers {

    /**
     * The toy lm with steps of at least a millisecond: a wait for pages lasts a step or more, long enough for the
     * gauge's sampler to see it however the threads of a busy machine are scheduled.
     */
    @Override
    ModelKernels kernels() {
        return new ModelKernels(KvCacheEngineTests.MODEL, Map.of(KvCacheEngineTests.LM,
                KvCacheEngineTests.ToyLm.pausing(1_000_000, batch -> { })));
    }

    /**
     * Starts every request in one burst: their messages reach the worker together, so their first steps batch together
     * and they contend for pages however busy the machine is (started one by one, early ones could finish first).
     */
    void startTogether(List<KvCacheEngineTests.Req> reqs) {
        broker.hold(s -> true);
        reqs.forEach(r -> conductor.start(r.id(), List.of(r.pass())));
        broker.release();
    }

    /** {@code count} requests of 3 pages each (prompts of 1..3 tokens growing to 9..12 positions). */
    static List<KvCacheEngineTests.Req> requests(String tag, int count, long seed) {
        Random random = new Random(seed);
        SamplingConfig topK = new SamplingConfig(null, 1.0, 5, 1.0, false, 1.0, 0L);
        List<KvCacheEngineTests.Req> reqs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int[] prompt = random.ints(1 + random.nextInt(3), 0, KvCacheEngineTests.VOCAB).toArray();
            reqs.add(new KvCacheEngineTests.Req(tag + i, prompt, 9 + random.nextInt(4), random.nextLong(), topK));
        }
        return reqs;
    }

    @Test
    void twiceTheRequestsThePagesHoldAllCompleteWithTheirOwnTokens() throws Exception {
        long seed = Seeds.of("KvPressureTests");
        List<KvCacheEngineTests.Req> reqs = requests("p", 7, seed);
        assertThat(reqs.stream().mapToInt(KvCacheEngineTests.Req::pages).sum()).as("pages wanted")
                .isGreaterThan(2 * KvCacheEngineTests.MAX_PAGES - 1);
        // the gauge shows the requests whose step waits for pages while they wait, and none once all are done; a
        // wait may last one step, so a thread beside the run samples it rather than the pump between messages
        GaugePeak peak = new GaugePeak(this::waiting);
        startTogether(reqs);
        try (peak) {
            conductor.pumpUntilRemoved(TIMEOUT);
        }
        assertThat(peak.value()).as("requests waiting for pages, the gauge's peak during the run (seed %d)", seed)
                .isPositive();
        assertThat(waiting()).as("requests waiting for pages after the run").isZero();

        for (KvCacheEngineTests.Req r : reqs) {
            ToyConductor.Run run = conductor.runs.get(r.id());
            assertThat(run.failure).as("%s (seed %d)", r.id(), seed).isNull();
            assertThat(run.firsts("out", 0)).as("%s (seed %d)", r.id(), seed).isEqualTo(r.expected());
        }
        double offloads = w0.registry.get(KvCaches.KV_MOVES).tags("move", "offload").functionCounter().count();
        double reloads = w0.registry.get(KvCaches.KV_MOVES).tags("move", "reload").functionCounter().count();
        assertThat(offloads).as("offloads (seed %d)", seed).isPositive();
        assertThat(reloads).as("every offloaded request that went on came back").isPositive().isLessThanOrEqualTo(offloads);
        assertThat(w0.registry.get(KvCaches.KV_PAGE_WAIT).timer().count()).as("requests that waited for pages")
                .isPositive();
        System.out.printf("KvPressureTests: seed %d, %.0f offloads, %.0f reloads%n", seed, offloads, reloads);
    } // everythingIsFreed: no page held on the device nor in the host pool

    /** The largest value a gauge showed while it ran, sampled every 20 µs on a thread of its own. */
    private static final class GaugePeak implements AutoCloseable {
        private final Thread sampler;
        private volatile boolean stop;
        private volatile double peak;

        GaugePeak(DoubleSupplier gauge) {
            sampler = new Thread(() -> {
                while (!stop) {
                    peak = Math.max(peak, gauge.getAsDouble());
                    LockSupport.parkNanos(20_000);
                }
            }, "gauge-peak");
            sampler.setDaemon(true);
            sampler.start();
        }

        double value() {
            return peak;
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            sampler.join();
        }
    }

    private double waiting() {
        // the cache, and its gauges, exist from the node's first step on
        var gauge = w0.registry.find(KvCaches.KV_WAITING).tags("node", KvCacheEngineTests.LM).gauge();
        return gauge == null ? 0 : gauge.value();
    }
}
