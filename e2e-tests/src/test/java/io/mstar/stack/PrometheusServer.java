package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;

/**
 * A real Prometheus (Debian's package, unpacked by helm/tools/fetch-prometheus.sh) scraping every service of a local
 * stack each second, with the target labels the Prometheus Operator would give (namespace, service, pod), and its
 * HTTP query API.
 */
final class PrometheusServer implements AutoCloseable {

    static final String NAMESPACE = "e2e";
    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(HTTP_TIMEOUT).build();
    private final ManagedProcess process;
    private final String url;

    private PrometheusServer(ManagedProcess process, String url) {
        this.process = process;
        this.url = url;
    }

    static PrometheusServer scraping(LocalStack stack) throws IOException, InterruptedException {
        Path root = ProjectLayout.discover().root();
        Path home = root.resolve("e2e-tests/target/prometheus");
        Process fetch = new ProcessBuilder("bash", root.resolve("helm/tools/fetch-prometheus.sh").toString(), home.toString())
                .redirectErrorStream(true).start();
        String fetchOutput = new String(fetch.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(fetch.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(fetch.exitValue()).as(fetchOutput).isZero();

        Path dir = stack.stateDir().resolve("prometheus");
        KafkaBroker.deleteRecursively(dir);
        Files.createDirectories(dir.resolve("data"));
        StringBuilder config = new StringBuilder("""
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: mstar
                    metrics_path: /actuator/prometheus
                    static_configs:
                """);
        config.append(target(stack.conductor(), "mstar-conductor", "mstar-conductor-0"));
        for (int n = 0; n < stack.workers().size(); n++) {
            config.append(target(stack.workers().get(n), "mstar-worker", "mstar-worker-" + n));
        }
        Files.writeString(dir.resolve("prometheus.yml"), config);
        int port = new LoopbackPorts().orFree(0);
        String url = "http://127.0.0.1:" + port;
        ManagedProcess process = ManagedProcess.start("prometheus", List.of(home.resolve("usr/bin/prometheus").toString(),
                "--config.file=" + dir.resolve("prometheus.yml"), "--storage.tsdb.path=" + dir.resolve("data"),
                "--storage.tsdb.retention.time=1h", "--web.listen-address=127.0.0.1:" + port), dir, dir.resolve("prometheus.log"));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(process.isAlive()).as("prometheus alive; log:%n%s", process.logTail(20)).isTrue();
            assertThat(HttpProbe.status(url + "/-/ready", HTTP_TIMEOUT)).isEqualTo(200);
        });
        return new PrometheusServer(process, url);
    }

    /** One static target with the labels a ServiceMonitor's target would carry on Kubernetes. */
    private static String target(ServiceProcess service, String serviceName, String pod) {
        String hostPort = URI.create(service.baseUrl()).getAuthority();
        return "      - targets: ['" + hostPort + "']\n"
                + "        labels: {namespace: " + NAMESPACE + ", service: " + serviceName + ", pod: " + pod + "}\n";
    }

    /** The result vector of an instant query. */
    JsonNode query(String promql) throws IOException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/api/v1/query?query="
                + URLEncoder.encode(promql, StandardCharsets.UTF_8))).timeout(HTTP_TIMEOUT).GET().build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as("%s: %s", promql, response.body()).isEqualTo(200);
            JsonNode body = MstarClient.JSON.readTree(response.body());
            assertThat(body.path("status").asText()).isEqualTo("success");
            return body.path("data").path("result");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** Every target of the stack is up (after a first scrape). */
    void awaitAllUp(int targets) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            JsonNode up = query("up");
            assertThat(up).hasSize(targets);
            up.forEach(t -> assertThat(t.path("value").get(1).asText()).as("%s", t.path("metric")).isEqualTo("1"));
        });
    }

    @Override
    public void close() {
        process.stop(Duration.ofSeconds(10));
        assertThat(process.isAlive()).as("prometheus stopped").isFalse();
    }
}
