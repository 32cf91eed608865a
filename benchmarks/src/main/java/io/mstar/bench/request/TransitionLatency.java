package io.mstar.bench.request;

import io.mstar.bench.DriverLogging;
import io.mstar.bench.kafka.KafkaRoundTrip;
import io.mstar.stack.LocalStack;
import io.mstar.stack.ProjectLayout;
import io.mstar.stack.ServiceProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A walk transition's latency next to the raw Kafka round trip, and the counter model's
 * requests/s at saturation, all in one run against one local stack (a real broker, the conductor
 * and the workers as processes):
 *
 * <ol>
 *   <li>Kafka: one hop and a true round trip (A→B→A, the services' producer settings) through the
 *   stack's broker, by {@link KafkaRoundTrip#measure}, while the services sit idle;</li>
 *   <li>transitions: counter requests with a long decode, one at a time; the workers'
 *   {@code mstar.worker.transition.wait} (report sent → next signals received: two hops and the
 *   conductor) and the conductor's {@code mstar.conductor.transition.overhead} (report in → signals
 *   out), as percentiles of the histogram buckets' increase over the phase;</li>
 *   <li>saturation: short requests from a closed loop of C clients per level; requests/s and the
 *   clients' latency percentiles.</li>
 * </ol>
 *
 * <p>The services get fine histogram buckets for the two timers through Spring arguments (a
 * geometric grid, 10 % apart, 10 µs to 2 s), so a percentile read off the buckets is within about
 * 10 % of the exact one.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.mstar.bench.request.TransitionLatency [--requests N] ... [--verbose]</pre>
 *
 * <p>{@code --verbose} keeps the Kafka clients' and Spring's INFO logging; see {@link DriverLogging}.
 */
public final class TransitionLatency {

    private static final String WORKER_WAIT = "mstar_worker_transition_wait_seconds";
    private static final String CONDUCTOR_OVERHEAD = "mstar_conductor_transition_overhead_seconds";
    /** The services' own per-hop figure: mstar-sent-at header to decoded at the receiver (one clock here). */
    private static final String CONDUCTOR_HOP = "mstar_conductor_message_latency_seconds";
    private static final String WORKER_HOP = "mstar_worker_message_latency_seconds";
    private static final String CONDUCTOR_LOOP = "mstar_conductor_loop_queue_wait_seconds";
    private static final String WORKER_LOOP = "mstar_worker_loop_queue_wait_seconds";
    /** Matches every series: the loop timers have no labels. */
    private static final String ANY = "";
    private static final String COUNTER = "model=\"counter\"";
    private static final String REPORTS = "message_type=\"worker_graphs_done\"";
    private static final String SIGNALS = "message_type=\"input_signals\"";
    private static final double BUCKET_RATIO = 1.1;

    private final HttpClient http;
    private final ExecutorService httpExecutor = Executors.newCachedThreadPool();
    private final LocalStack stack;
    private final int[] prompt = {1, 2};

    private TransitionLatency(LocalStack stack) {
        this.stack = stack;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(httpExecutor)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(DriverLogging.configure(args));
        ProjectLayout layout = ProjectLayout.discover();
        // A fresh directory per run: the broker's data of an earlier run would hold its topics.
        Path stateDir = Files.createDirectories(layout.root().resolve("benchmarks/target"))
                .resolve("transition-latency-" + System.currentTimeMillis());
        System.out.printf("load average at start: %s%n", loadAverage());
        long begin = System.nanoTime();
        try (LocalStack stack = LocalStack.builder().layout(layout).stateDir(stateDir).workers(options.workers)
                .serviceArgs(histogramArgs()).readyTimeout(Duration.ofSeconds(240)).start()) {
            System.out.printf("local stack: %d workers ready in %.1f s (logs in %s)%n", options.workers,
                    (System.nanoTime() - begin) / 1e9, stateDir.resolve("logs"));
            TransitionLatency bench = new TransitionLatency(stack);
            try {
                bench.run(options);
            } finally {
                bench.httpExecutor.shutdownNow();
            }
        }
        System.out.printf("load average at end: %s%n", loadAverage());
    }

    private void run(Options options) throws Exception {
        System.out.printf("%nKafka on the stack's broker: warm-up %d, measured %d each way%n", options.kafkaWarmup,
                options.kafkaMessages);
        KafkaRoundTrip.Result kafka = KafkaRoundTrip.measure(stack.bootstrapServers(), "mstar-bench.roundtrip",
                options.kafkaWarmup, options.kafkaMessages);
        Stats oneHop = Stats.of(kafka.oneHopNanos());
        Stats roundTrip = Stats.of(kafka.roundTripNanos());
        Stats committing = Stats.of(kafka.roundTripCommittingNanos());

        System.out.printf("%ntransitions: %d warm-up and %d measured requests of max_tokens %d, one at a time%n",
                options.warmupRequests, options.requests, options.maxTokens);
        for (int i = 0; i < options.warmupRequests; i++) {
            request(options.maxTokens);
        }
        requireBuckets();
        Scrapes before = scrape();
        long[] latencies = new long[options.requests];
        for (int i = 0; i < options.requests; i++) {
            latencies[i] = request(options.maxTokens);
        }
        Scrapes after = scrape();
        Histogram wait = after.workers.minus(before.workers);
        Histogram overhead = after.conductor.minus(before.conductor);
        Histogram reportHop = after.reportHop.minus(before.reportHop);
        Histogram signalHop = after.signalHop.minus(before.signalHop);
        Histogram conductorLoop = after.conductorLoop.minus(before.conductorLoop);
        Histogram workerLoop = after.workerLoop.minus(before.workerLoop);
        Stats requestLatency = Stats.of(latencies);

        System.out.printf("%nthe same requests while the raw round trip runs next to them (%d messages)%n",
                options.kafkaMessages);
        Loaded loaded = loaded(options);

        System.out.printf("%nsaturation: max_tokens %d, closed loop, %d s warm-up + %d s measured per level%n",
                options.saturationMaxTokens, options.levelWarmupSeconds, options.levelSeconds);
        List<Level> levels = new ArrayList<>();
        for (int concurrency : options.levels) {
            Level level = saturate(concurrency, options);
            levels.add(level);
            System.out.printf("  concurrency %d: %.1f requests/s, p50 %s, p99 %s, %d errors%n", concurrency,
                    level.perSecond, ms(level.latency.p50), ms(level.latency.p99), level.errors);
        }

        printTables(options, oneHop, roundTrip, wait, overhead, requestLatency, levels);
        System.out.printf("%n| round trip, consumers committing after each poll | %,d | %s | %s | %s | %s |%n",
                committing.n, ms(committing.p50), ms(committing.p90), ms(committing.p99), ms(committing.max));
        printShares(wait, reportHop, conductorLoop, overhead, signalHop, workerLoop);
        double loadedRatio = loaded.transitionWait.quantile(0.5) * 1e9 / loaded.roundTrip.p50;
        System.out.printf("%nside by side (requests one at a time, the raw round trip measured at the same time): raw "
                        + "round trip p50 %s p90 %s; end-to-end transition p50 %s p90 %s (%,d); ratio at p50 %.2f "
                        + "(goal ≤ 1.5: %s)%n",
                ms(loaded.roundTrip.p50), ms(loaded.roundTrip.p90), seconds(loaded.transitionWait.quantile(0.5)),
                seconds(loaded.transitionWait.quantile(0.9)), (long) loaded.transitionWait.count(), loadedRatio,
                loadedRatio <= 1.5 ? "met" : "missed");
    }

    private void printTables(Options options, Stats oneHop, Stats roundTrip, Histogram wait, Histogram overhead,
                             Stats requestLatency, List<Level> levels) {
        System.out.println();
        System.out.println("| Kafka, stack's broker | n | p50 | p90 | p99 | max |");
        System.out.println("|---|---:|---:|---:|---:|---:|");
        System.out.printf("| one hop (produce→consume) | %,d | %s | %s | %s | %s |%n", oneHop.n, ms(oneHop.p50),
                ms(oneHop.p90), ms(oneHop.p99), ms(oneHop.max));
        System.out.printf("| round trip (A→B→A) | %,d | %s | %s | %s | %s |%n", roundTrip.n, ms(roundTrip.p50),
                ms(roundTrip.p90), ms(roundTrip.p99), ms(roundTrip.max));
        System.out.println();
        System.out.println("| per transition (from the scrapes) | n | p50 | p90 | p99 | mean |");
        System.out.println("|---|---:|---:|---:|---:|---:|");
        for (var row : List.of(List.of("end to end: worker report sent → next signals received", wait),
                List.of("conductor: report in → signals out", overhead))) {
            Histogram h = (Histogram) row.get(1);
            System.out.printf("| %s | %,d | %s | %s | %s | %s |%n", row.get(0), (long) h.count(),
                    seconds(h.quantile(0.5)), seconds(h.quantile(0.9)), seconds(h.quantile(0.99)),
                    seconds(h.sum() / h.count()));
        }
        double transitionsPerRequest = wait.count() / options.requests;
        System.out.printf("%nclient: request of max_tokens %d, p50 %s, p99 %s; %.1f transitions per request, so "
                        + "%s per transition including the kernels at p50%n", options.maxTokens,
                ms(requestLatency.p50), ms(requestLatency.p99), transitionsPerRequest,
                ms((long) (requestLatency.p50 / transitionsPerRequest)));
        double ratio = wait.quantile(0.5) * 1e9 / roundTrip.p50;
        // Not the goal's figure: this raw round trip ran back to back with the services idle, a hot loop whose threads
        // never park, while every transition wakes its threads after the kernels ran. The goal is judged side by side.
        System.out.printf("end-to-end transition p50 / raw round trip p50 (back to back, services idle) = %.2f; "
                        + "conductor's share of the end-to-end p50 %.0f %%%n", ratio,
                100 * overhead.quantile(0.5) / wait.quantile(0.5));
        System.out.println();
        System.out.printf("| concurrency | requests | requests/s | p50 | p99 | transition wait p50 | errors |%n");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        for (Level level : levels) {
            System.out.printf("| %d | %,d | %.1f | %s | %s | %s | %d |%n", level.concurrency, level.latency.n,
                    level.perSecond, ms(level.latency.p50), ms(level.latency.p99),
                    seconds(level.transitionWait.quantile(0.5)), level.errors);
        }
    }

    /**
     * Where the end-to-end transition goes, by the services' own timers over the same phase, in the order a
     * transition meets them. Means add up, percentiles do not. The hop and loop rows count every message or command of
     * the phase, not only the transition's; the rest is the mean left over.
     */
    private static void printShares(Histogram wait, Histogram reportHop, Histogram conductorLoop, Histogram overhead,
            Histogram signalHop, Histogram workerLoop) {
        System.out.println();
        System.out.println("| share of a transition (same phase) | n | p50 | p90 | mean |");
        System.out.println("|---|---:|---:|---:|---:|");
        double rest = wait.mean() - reportHop.mean() - conductorLoop.mean() - overhead.mean() - signalHop.mean()
                - workerLoop.mean();
        for (var row : List.of(List.of("worker_graphs_done hop (sent-at → decoded by the conductor)", reportHop),
                List.of("conductor's lifecycle loop: queue wait of a command (hand-off)", conductorLoop),
                List.of("conductor: report in → signals out", overhead),
                List.of("input_signals hop (sent-at → decoded by the worker)", signalHop),
                List.of("workers' engine loops: queue wait of a command (hand-off)", workerLoop),
                List.of("end to end (worker)", wait))) {
            Histogram h = (Histogram) row.get(1);
            System.out.printf("| %s | %,d | %s | %s | %s |%n", row.get(0), (long) h.count(),
                    seconds(h.quantile(0.5)), seconds(h.quantile(0.9)), seconds(h.mean()));
        }
        System.out.printf("| rest (mean end to end − the five means) | | | | %s |%n", seconds(rest));
    }

    private record Loaded(Stats roundTrip, Histogram transitionWait) {
    }

    /** Transitions and the raw round trip under one load: neither has the machine to itself. */
    private Loaded loaded(Options options) throws Exception {
        java.util.concurrent.CompletableFuture<KafkaRoundTrip.Result> kafka = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> {
                    try {
                        return KafkaRoundTrip.measure(stack.bootstrapServers(), "mstar-bench.roundtrip-loaded",
                                options.kafkaWarmup / 4, options.kafkaMessages);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
        Scrapes before = scrape();
        while (!kafka.isDone()) {
            request(options.maxTokens);
        }
        Scrapes after = scrape();
        return new Loaded(Stats.of(kafka.get().roundTripNanos()), after.workers.minus(before.workers));
    }

    // ---------------------------------------------------------------- requests

    /** One non-streaming counter request; its latency in nanos. Fails on anything but 200. */
    private long request(int maxTokens) throws Exception {
        long start = System.nanoTime();
        HttpResponse<String> response = http.send(post(maxTokens), HttpResponse.BodyHandlers.ofString());
        long took = System.nanoTime() - start;
        if (response.statusCode() != 200) {
            throw new IllegalStateException("request answered " + response.statusCode() + ": " + response.body());
        }
        checkLastToken(response.body(), maxTokens);
        return took;
    }

    /** The counter's last token is s0 + max_tokens (CounterModel): a cheap check that the work was done. */
    private void checkLastToken(String body, int maxTokens) {
        int s0 = 2 * Arrays.stream(prompt).sum() + prompt.length;
        String last = Integer.toString(s0 + maxTokens);
        if (!body.matches("(?s).*\\b" + last + "\\b.*")) {
            throw new IllegalStateException("the response lacks the last token " + last + ": " + body);
        }
    }

    private HttpRequest post(int maxTokens) {
        String body = String.format(Locale.ROOT,
                "{\"model\":\"counter\",\"inputs\":{\"tokens\":{\"tokens\":%s}},\"max_tokens\":%d,\"stream\":false}",
                Arrays.toString(prompt).replace(" ", ""), maxTokens);
        return HttpRequest.newBuilder(URI.create(stack.conductor().baseUrl() + "/v1/requests"))
                .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private record Level(int concurrency, Stats latency, double perSecond, Histogram transitionWait, long errors) {
    }

    /** C clients, each sending its next request when the last one answered, for warm-up + measured seconds. */
    private Level saturate(int concurrency, Options options) throws Exception {
        long start = System.nanoTime();
        long measureFrom = start + options.levelWarmupSeconds * 1_000_000_000L;
        long measureTo = measureFrom + options.levelSeconds * 1_000_000_000L;
        AtomicLong errors = new AtomicLong();
        List<long[]> perClient = new ArrayList<>();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < concurrency; c++) {
            long[] latencies = new long[1 << 16];
            perClient.add(latencies);
            int slot = c;
            Thread client = new Thread(() -> {
                int n = 0;
                while (true) {
                    long sent = System.nanoTime();
                    if (sent >= measureTo) {
                        break;
                    }
                    try {
                        long took = request(options.saturationMaxTokens);
                        if (sent >= measureFrom && sent + took <= measureTo && n < latencies.length - 1) {
                            latencies[++n] = took;
                        }
                    } catch (Exception e) {
                        if (errors.incrementAndGet() == 1) {
                            System.out.println("  first error: " + e);
                        }
                    }
                }
                latencies[0] = n; // slot 0 holds the count
            }, "mstar-bench-client-" + slot);
            clients.add(client);
            client.start();
        }
        sleepUntil(measureFrom);
        Scrapes before = scrape();
        sleepUntil(measureTo);
        Scrapes after = scrape();
        for (Thread client : clients) {
            client.join();
        }
        long[] all = perClient.stream().flatMapToLong(l -> Arrays.stream(l, 1, 1 + (int) l[0])).toArray();
        return new Level(concurrency, Stats.of(all), all.length / (double) options.levelSeconds,
                after.workers.minus(before.workers), errors.get());
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }

    // ---------------------------------------------------------------- scrapes

    /**
     * Worker transition waits, conductor overheads, report hops (worker→conductor), signal hops (back), and the
     * queue waits of the conductor's and the workers' owner loops.
     */
    private record Scrapes(Histogram workers, Histogram conductor, Histogram reportHop, Histogram signalHop,
            Histogram conductorLoop, Histogram workerLoop) {
    }

    private Scrapes scrape() throws Exception {
        Histogram workers = Histogram.EMPTY;
        Histogram signalHop = Histogram.EMPTY;
        Histogram workerLoop = Histogram.EMPTY;
        for (ServiceProcess worker : stack.workers()) {
            String text = get(worker.prometheusUrl());
            workers = workers.plus(Histogram.parse(text, WORKER_WAIT, COUNTER));
            signalHop = signalHop.plus(Histogram.parse(text, WORKER_HOP, SIGNALS));
            workerLoop = workerLoop.plus(Histogram.parse(text, WORKER_LOOP, ANY));
        }
        String conductor = get(stack.conductor().prometheusUrl());
        return new Scrapes(workers, Histogram.parse(conductor, CONDUCTOR_OVERHEAD, COUNTER),
                Histogram.parse(conductor, CONDUCTOR_HOP, REPORTS), signalHop,
                Histogram.parse(conductor, CONDUCTOR_LOOP, ANY), workerLoop);
    }

    /** The grid must have reached the services, or every percentile would be a guess between 1 ms and +Inf. */
    private void requireBuckets() throws Exception {
        Scrapes now = scrape();
        for (Histogram h : List.of(now.workers, now.conductor, now.reportHop, now.signalHop, now.conductorLoop,
                now.workerLoop)) {
            if (h.bounds().length < 100 || h.count() == 0) {
                throw new IllegalStateException("the services expose " + h.bounds().length + " buckets and "
                        + h.count() + " transitions: the histogram arguments did not take");
            }
        }
    }

    private String get(String url) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(url + " answered " + response.statusCode());
        }
        return response.body();
    }

    /** Spring arguments: a 10 %-apart bucket grid (10 µs..2 s) for the transition, hop and loop timers. */
    static List<String> histogramArgs() {
        List<String> bounds = new ArrayList<>();
        for (double ns = 10_000; ns <= 2e9; ns *= BUCKET_RATIO) {
            bounds.add(Math.round(ns) + "ns");
        }
        String grid = String.join(",", bounds);
        return List.of("--management.metrics.distribution.slo.mstar.worker.transition.wait=" + grid,
                "--management.metrics.distribution.slo.mstar.conductor.transition.overhead=" + grid,
                "--management.metrics.distribution.slo.mstar.worker.message.latency=" + grid,
                "--management.metrics.distribution.slo.mstar.conductor.message.latency=" + grid,
                "--management.metrics.distribution.slo.mstar.worker.loop.queue.wait=" + grid,
                "--management.metrics.distribution.slo.mstar.conductor.loop.queue.wait=" + grid);
    }

    // ---------------------------------------------------------------- figures

    /** Exact nearest-rank percentiles of nanosecond samples. */
    record Stats(int n, long p50, long p90, long p99, long max) {
        static Stats of(long[] nanos) {
            if (nanos.length == 0) {
                return new Stats(0, 0, 0, 0, 0);
            }
            long[] sorted = nanos.clone();
            Arrays.sort(sorted);
            return new Stats(sorted.length, KafkaRoundTrip.percentile(sorted, 0.5), KafkaRoundTrip.percentile(sorted, 0.9),
                    KafkaRoundTrip.percentile(sorted, 0.99), sorted[sorted.length - 1]);
        }
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }

    private static String seconds(double seconds) {
        return Double.isNaN(seconds) ? "–" : String.format(Locale.ROOT, "%.2f ms", seconds * 1e3);
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** Command-line options, each {@code --name value}. */
    record Options(int workers, int kafkaWarmup, int kafkaMessages, int warmupRequests, int requests, int maxTokens,
                   int saturationMaxTokens, int[] levels, int levelWarmupSeconds, int levelSeconds) {
        static Options parse(String[] args) {
            return new Options(option(args, "--workers", 2), option(args, "--kafka-warmup", 2_000),
                    option(args, "--kafka-messages", 5_000), option(args, "--warmup-requests", 250),
                    option(args, "--requests", 200), option(args, "--max-tokens", 64),
                    option(args, "--saturation-max-tokens", 8),
                    Arrays.stream(stringOption(args, "--levels", "1,4,16,64").split(","))
                            .mapToInt(Integer::parseInt).toArray(),
                    option(args, "--level-warmup-seconds", 3), option(args, "--level-seconds", 15));
        }

        private static int option(String[] args, String name, int fallback) {
            return Integer.parseInt(stringOption(args, name, Integer.toString(fallback)));
        }

        private static String stringOption(String[] args, String name, String fallback) {
            for (int i = 0; i + 1 < args.length; i++) {
                if (args[i].equals(name)) {
                    return args[i + 1];
                }
            }
            return fallback;
        }
    }
}
