package io.mstar.bench.tts;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.model.ToyTtsModel;

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
