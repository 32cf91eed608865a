package io.mstar.bench.tts;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.mstar.bench.DriverLogging;
import io.mstar.bench.DriverOptions;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.stack.LocalStack;
import io.mstar.stack.ProjectLayout;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kv.KvCache;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * toy-tts decode through the whole local stack over HTTP: e2e-tests' {@code LocalStack} (a real broker, the conductor
 * and two worker processes from the built exec jars, the built-in deployment: lm on worker 1 with a KV pool of 512
 * pages of 16). Every request is text only, {@code ignore_eos}, temperature 0.8 and top-k 40, so each runs exactly
 * {@code --tokens}; its answer is checked for that many text tokens. Two workloads, each measured in one run:
 * <ul>
 * <li>{@code --workload serving} (default): for each batch B of {@code --batches 1,8,32}, B concurrent requests of
 * {@code --tokens 128}, after a warm-up round; stack tokens/s = B · tokens / the round's wall time, divided by the
 * kernels' own tokens/s ({@link ToyTtsDecode#round} on a host device in this process, measured while the stack is
 * idle in the same run).</li>
 * <li>{@code --workload pressure}: {@code --requests 32} concurrent requests of {@code --tokens 512} (seeds 0..n-1), on
 * the built-in pool, where they need about twice its pages and the worker offloads and reloads, and on a stack whose
 * pool holds them all ({@code max_num_pages} 2048); completed tokens/s and the requests' p50 and p99 latency, and
 * the pressure figures over the sized-to-fit ones.</li>
 * </ul>
 * Options: {@code --workload serving|pressure}, {@code --batches}, {@code --requests}, {@code --tokens},
 * {@code --rounds 3} (serving: the best round is kept), {@code --verbose}.
 */
public final class StackDecode {

    private static final ObjectMapper JSON = new ObjectMapper();

    private StackDecode() {
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        DriverOptions o = DriverOptions.parseOrExit("StackDecode", args, "--workload", "serving", "--batches", "1,8,32",
                "--requests", "32", "--rounds", "3", "--tokens", "auto");
        boolean pressure = switch (o.get("--workload")) {
            case "pressure" -> true;
            case "serving" -> false;
            default -> throw new IllegalArgumentException("--workload serving|pressure, not " + o.get("--workload"));
        };
        int tokens = o.get("--tokens").equals("auto") ? (pressure ? 512 : 128) : o.integer("--tokens", 1);
        if (pressure) {
            pressure(o.integer("--requests", 1), tokens);
        } else {
            serving(o.integers("--batches", 1), tokens, o.integer("--rounds", 1));
        }
    }

    private static void serving(int[] batches, int tokens, int rounds) throws Exception {
        double[] kernels = new double[batches.length];
        try (HostDevice device = new HostDevice(HostDevice.NAME, 256L << 20);
                KvCache cache = new KvCache(device, new KvCacheConfig(16, 64 * 32), ToyTtsWeights.BYTES_PER_TOKEN)) {
            HostLmBackend backend = new HostLmBackend(ToyTtsWeights.generate());
            try (Stack stack = Stack.start("serving", null)) {
                System.out.println("toy-tts through the stack over HTTP: " + tokens + " tokens per request, text only");
                for (int i = 0; i < batches.length; i++) {
                    ToyTtsDecode.round(device, backend, cache, batches[i], 32, tokens, -1);
                    kernels[i] = ToyTtsDecode.round(device, backend, cache, batches[i], 32, tokens, 0).tokensPerSecond();
                }
                System.out.println("| batch | kernel-only tokens/s | stack tokens/s | ratio |");
                System.out.println("|---:|---:|---:|---:|");
                for (int i = 0; i < batches.length; i++) {
                    stack.round("warm-" + batches[i], batches[i], tokens);
                    double best = 0;
                    for (int r = 0; r < rounds; r++) {
                        best = Math.max(best, stack.round("b" + batches[i] + "-" + r, batches[i], tokens).tokensPerSecond());
                    }
                    System.out.printf(Locale.ROOT, "| %d | %.0f | %.0f | %.3f |%n", batches[i], kernels[i], best,
                            best / kernels[i]);
                }
            }
        }
    }

    private static void pressure(int requests, int tokens) throws Exception {
        String builtIn = new String(StackDecode.class.getResourceAsStream("/io/mstar/deployment/default-deployment.yaml")
                .readAllBytes(), StandardCharsets.UTF_8);
        if (!builtIn.contains("max_num_pages: 512")) {
            throw new IllegalStateException("the built-in deployment no longer has a pool of 512 pages");
        }
        Round fit;
        Round tight;
        try (Stack stack = Stack.start("fit", builtIn.replace("max_num_pages: 512", "max_num_pages: 2048"))) {
            stack.round("warm", 8, 64);
            fit = stack.round("fit", requests, tokens);
        }
        try (Stack stack = Stack.start("pressure", null)) {
            stack.round("warm", 8, 64);
            tight = stack.round("pressure", requests, tokens);
        }
        System.out.printf(Locale.ROOT, "toy-tts through the stack: %d concurrent requests of %d tokens, text only%n",
                requests, tokens);
        System.out.println("| pool | completed tokens/s | p50 latency s | p99 latency s |");
        System.out.println("|---|---:|---:|---:|");
        System.out.printf(Locale.ROOT, "| 2048 pages (fits) | %.0f | %.2f | %.2f |%n", fit.tokensPerSecond(),
                fit.latency(0.5), fit.latency(0.99));
        System.out.printf(Locale.ROOT, "| 512 pages (offload) | %.0f | %.2f | %.2f |%n", tight.tokensPerSecond(),
                tight.latency(0.5), tight.latency(0.99));
        System.out.printf(Locale.ROOT, "pressure / fit: tokens/s %.3f, p99 latency %.3f%n",
                tight.tokensPerSecond() / fit.tokensPerSecond(), tight.latency(0.99) / fit.latency(0.99));
    }

    /** One round's figures: every request's latency, and the completed tokens over the round's wall time. */
    private record Round(double seconds, long tokens, double[] latencies) {

        double tokensPerSecond() {
            return tokens / seconds;
        }

        double latency(double quantile) {
            double[] sorted = latencies.clone();
            Arrays.sort(sorted);
            return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)];
        }
    }

    /** A fresh local stack with its HTTP client. */
    private record Stack(LocalStack stack, HttpClient http, ExecutorService clients) implements AutoCloseable {

        static Stack start(String name, String deploymentYaml) throws IOException {
            ProjectLayout layout = ProjectLayout.discover();
            // A fresh directory per run: the broker's data of an earlier run would hold its topics.
            Path dir = Files.createDirectories(layout.root().resolve("benchmarks/target"))
                    .resolve("stack-decode-" + name + "-" + System.currentTimeMillis());
            LocalStack.Builder builder = LocalStack.builder().layout(layout).stateDir(dir).workers(2)
                    .readyTimeout(Duration.ofSeconds(240));
            if (deploymentYaml != null) {
                builder.deploymentYaml(deploymentYaml);
            }
            ExecutorService clients = Executors.newCachedThreadPool();
            return new Stack(builder.start(), HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .executor(clients).connectTimeout(Duration.ofSeconds(5)).build(), clients);
        }

        Round round(String tag, int requests, int tokens) throws Exception {
            long start = System.nanoTime();
            List<Future<Double>> answers = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                int seed = i;
                answers.add(clients.submit(() -> request(tag + "-" + seed, seed, tokens)));
            }
            double[] latencies = new double[requests];
            for (int i = 0; i < requests; i++) {
                latencies[i] = answers.get(i).get();
            }
            return new Round((System.nanoTime() - start) / 1e9, (long) requests * tokens, latencies);
        }

        /** One request to its end; answers its latency in seconds, after checking it produced {@code tokens}. */
        private double request(String id, int seed, int tokens) throws Exception {
            String body = String.format(Locale.ROOT, "{\"model\":\"toy-tts\",\"request_id\":\"%s-%d\",\"inputs\":"
                    + "{\"text\":{\"text\":\"pressure %d\"}},\"outputs\":[\"text\"],\"max_tokens\":%d,\"sampling\":"
                    + "{\"temperature\":0.8,\"top_k\":40,\"ignore_eos\":true},\"seed\":%d,\"stream\":false}", id,
                    System.nanoTime(), seed, tokens, seed);
            long start = System.nanoTime();
            HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(
                    URI.create(stack.conductor().baseUrl() + "/v1/requests")).timeout(Duration.ofMinutes(10))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            JsonNode answer;
            try (InputStream in = response.body()) {
                answer = JSON.readTree(in);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (response.statusCode() != 200) {
                throw new IllegalStateException(id + ": HTTP " + response.statusCode() + " " + answer);
            }
            int text = 0;
            for (JsonNode output : answer.path("outputs")) {
                if (output.path("name").asString().equals("text")) {
                    text += output.path("data").size();
                }
            }
            if (text != tokens) {
                throw new IllegalStateException(id + ": " + text + " text tokens, not " + tokens);
            }
            return seconds;
        }

        @Override
        public void close() {
            clients.shutdownNow();
            stack.close();
        }
    }
}
