package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The dashboards and alert rules of helm/mstar query only series the running services export: a real stack serves
 * counter requests (completed, streamed, aborted, rejected), every service's /actuator/prometheus is scraped, and
 * each metric name in the dashboards' queries and in the PrometheusRule template must be in those scrapes. A real
 * Prometheus (Debian's package, unpacked by helm/tools/fetch-prometheus.sh) scrapes the stack meanwhile, with the
 * target labels the Prometheus Operator would give (namespace, service, pod): every target is up and dashboard
 * queries, run as Grafana would run them, return the traffic.
 */
@Tag("kafka")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsCatalogTests {

    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);
    /** Requests that complete normally: 4 counter requests streamed, one toy-tts request, the rest collected. */
    private static final int COMPLETED = 100;
    private static final Pattern METRIC = Pattern.compile("\\b((?:mstar|jvm|http_server|process)_[a-z0-9_]+)\\b");
    private static final String NAMESPACE = PrometheusServer.NAMESPACE;
    private static final Pattern SELECTOR = Pattern.compile("[a-z_:][a-z0-9_:]*\\{[^}]*\\}");

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    private MstarClient client;
    private PrometheusServer prometheus;

    @BeforeAll
    void startPrometheusAndSendTraffic() throws IOException, InterruptedException {
        LocalStack stack = STACK.stack();
        prometheus = PrometheusServer.scraping(stack);
        client = new MstarClient(stack);
        sendTraffic(stack);
        Leaks.awaitBaseline(stack, Duration.ofSeconds(30));
    }

    @AfterAll
    void stop() {
        if (client != null) {
            client.close();
        }
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @Test
    void eachWorkerCountsItsRequestEndsByCauseAndANormalEndIsNoCancellation() throws IOException {
        // Every counter request runs on both workers (its prefill is split), so each saw all of them end.
        for (ServiceProcess worker : STACK.stack().workers()) {
            PrometheusScrape scrape = new PrometheusScrape(HttpProbe.body(worker.prometheusUrl(), HTTP_TIMEOUT));
            assertThat(scrape.value("mstar_worker_requests_ended_total", Map.of("cause", "completed")))
                    .as("%s completed", worker.name()).contains((double) COMPLETED);
            assertThat(scrape.value("mstar_worker_requests_ended_total", Map.of("cause", "aborted")))
                    .as("%s aborted", worker.name()).contains(1.0);
            assertThat(scrape.value("mstar_worker_requests_ended_total", Map.of("cause", "failed")))
                    .as("%s failed", worker.name()).contains(0.0);
            assertThat(scrape.value("mstar_worker_requests_ended_total", Map.of("cause", "conductor_lost")))
                    .as("%s conductor_lost", worker.name()).contains(0.0);
        }
    }

    @Test
    void everyMetricTheDashboardsAndAlertsQueryIsInTheLiveScrape() throws IOException {
        LocalStack stack = STACK.stack();
        Set<String> exported = new TreeSet<>();
        exported.addAll(seriesNames(HttpProbe.body(stack.conductor().prometheusUrl(), HTTP_TIMEOUT)));
        for (ServiceProcess worker : stack.workers()) {
            exported.addAll(seriesNames(HttpProbe.body(worker.prometheusUrl(), HTTP_TIMEOUT)));
        }
        Set<String> dashboards = new TreeSet<>();
        for (Path dashboard : dashboards()) {
            dashboards.addAll(metricNames(Files.readString(dashboard)));
        }
        Set<String> rules = metricNames(Files.readString(chartDir().resolve("templates/prometheusrule.yaml")));

        System.out.printf("MetricsCatalogTests: dashboards use %d metric names, alert rules %d; the stack exports %d%n",
                dashboards.size(), rules.size(), exported.size());
        // The extraction itself finds what it must (the regex and the files are right).
        assertThat(dashboards).hasSizeGreaterThan(40).contains("mstar_conductor_request_latency_seconds_bucket",
                "mstar_worker_step_seconds_bucket", "mstar_worker_arena_used_bytes", "mstar_conductor_worker_heartbeat_age_seconds",
                "http_server_requests_seconds_count", "jvm_memory_used_bytes");
        assertThat(rules).contains("mstar_conductor_request_latency_seconds_bucket", "mstar_conductor_requests_queued",
                "mstar_worker_messages_dead_lettered_total", "mstar_worker_tensors_live", "mstar_conductor_workers",
                "mstar_worker_kafka_consumer_lag_records");
        assertThat(exported).as("dashboard metrics missing from the scrape").containsAll(dashboards);
        assertThat(exported).as("alert-rule metrics missing from the scrape").containsAll(rules);
    }

    @Test
    void prometheusScrapesEveryServiceAndDashboardQueriesReturnTheTraffic() throws IOException {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            JsonNode up = prometheus.query("up");
            assertThat(up).hasSize(1 + STACK.stack().workers().size());
            up.forEach(target -> assertThat(target.path("value").get(1).asText()).as("%s", target.path("metric")).isEqualTo("1"));
        });
        Map<String, List<String>> panels = panelQueries();

        JsonNode ready = prometheus.query(grafana(only(panels, "Ready workers").get(0)));
        assertThat(ready).anySatisfy(s -> {
            assertThat(s.path("metric").path("state").asText()).isEqualTo("ready");
            assertThat(s.path("value").get(1).asDouble()).isEqualTo(2.0);
        });
        // Fresh traffic on series Prometheus already holds: within the 1m rate window, rates and quantiles are positive.
        sendCompletedRequests(2);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            JsonNode requests = prometheus.query(grafana(only(panels, "Requests /s by status and error type").get(0)));
            assertThat(requests).anySatisfy(s -> {
                assertThat(s.path("metric").path("status").asText()).isEqualTo("completed");
                assertThat(s.path("value").get(1).asDouble()).isPositive();
            });
            assertThat(requests).anySatisfy(s -> assertThat(s.path("metric").path("status").asText()).isEqualTo("aborted"));
            JsonNode p99 = prometheus.query(grafana(panels.get("End-to-end latency p50 / p99").get(1)));
            // the toy-tts request of the traffic may still be in the window: one series per model
            assertThat(p99).anySatisfy(s -> {
                assertThat(s.path("metric").path("model").asText()).isEqualTo("counter");
                assertThat(s.path("value").get(1).asDouble()).isPositive().isLessThan(60);
            });
        });
        // Every other query returns series (a flat counter's rate is 0, an empty histogram's quantile NaN: still
        // data); an empty result means a selector or a join matches nothing. The stack served no 503.
        // The idle-only panels (leak canaries) need a scrape taken after the last request ended: retried briefly.
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<String> empty = new ArrayList<>();
            int total = 0;
            for (Map.Entry<String, List<String>> panel : panels.entrySet()) {
                for (String expr : panel.getValue()) {
                    total++;
                    if (prometheus.query(grafana(expr)).isEmpty()) {
                        empty.add(panel.getKey() + ": " + expr);
                    }
                }
            }
            System.out.printf("MetricsCatalogTests: %d of %d dashboard queries return data from the live stack%n",
                    total - empty.size(), total);
            assertThat(empty).as("dashboard queries without data").singleElement().asString().startsWith("503s /s: ");
        });
    }

    @Test
    void everyAlertSelectorMatchesLiveSeriesAndNoAlertHoldsOnTheHealthyStack() throws IOException {
        Map<String, String> alerts = alertExpressions();
        assertThat(alerts).hasSize(8);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            for (Map.Entry<String, String> alert : alerts.entrySet()) {
                Matcher selector = SELECTOR.matcher(alert.getValue());
                int selectors = 0;
                while (selector.find()) {
                    selectors++;
                    // The release's namespace/service matchers and the alert's own matchers select real series.
                    assertThat(prometheus.query("count(" + selector.group() + ")")).as("%s: %s", alert.getKey(), selector.group())
                            .isNotEmpty();
                }
                assertThat(selectors).as(alert.getKey()).isPositive();
            }
        });
        Leaks.awaitBaseline(STACK.stack(), Duration.ofSeconds(30));
        for (Map.Entry<String, String> alert : alerts.entrySet()) {
            assertThat(prometheus.query(alert.getValue())).as("%s holds on a healthy, idle stack: %s", alert.getKey(), alert.getValue())
                    .isEmpty();
        }
    }

    /**
     * The PrometheusRule template's expressions as Helm renders them for this stack: the release's selectors with
     * this stack's namespace and Service names, thresholds from the chart's values.yaml.
     */
    private static Map<String, String> alertExpressions() throws IOException {
        JsonNode values = new tools.jackson.dataformat.yaml.YAMLMapper().readTree(chartDir().resolve("values.yaml").toFile())
                .path("metrics").path("prometheusRule");
        Map<String, String> alerts = new java.util.LinkedHashMap<>();
        String alert = null;
        for (String line : Files.readAllLines(chartDir().resolve("templates/prometheusrule.yaml"))) {
            String trimmed = line.strip();
            if (trimmed.startsWith("- alert: ")) {
                alert = trimmed.substring("- alert: ".length());
            } else if (trimmed.startsWith("expr: ")) {
                String expr = trimmed.substring("expr: ".length())
                        .replace(" {{- $c }}", "namespace=\"" + NAMESPACE + "\", service=\"mstar-conductor\"")
                        .replace(" {{- $w }}", "namespace=\"" + NAMESPACE + "\", service=\"mstar-worker\"");
                Matcher value = Pattern.compile("\\{\\{ \\$pr\\.([a-zA-Z0-9.]+) \\}\\}").matcher(expr);
                StringBuilder rendered = new StringBuilder();
                while (value.find()) {
                    JsonNode node = values;
                    for (String key : value.group(1).split("\\.")) {
                        node = node.path(key);
                    }
                    assertThat(node.isMissingNode()).as("values.yaml has metrics.prometheusRule.%s", value.group(1)).isFalse();
                    value.appendReplacement(rendered, Matcher.quoteReplacement(node.asText()));
                }
                value.appendTail(rendered);
                assertThat(rendered.toString()).as(alert).doesNotContain("{{");
                alerts.put(alert, rendered.toString());
            }
        }
        return alerts;
    }

    private void sendCompletedRequests(int count) {
        for (int i = 0; i < count; i++) {
            try (MstarClient.Stream stream = client.openStream(
                    MstarClient.counterRequest(null, List.of(1, 2, 3), 6, 18, true))) {
                List<JsonNode> chunks = stream.readAll();
                assertThat(chunks.get(chunks.size() - 1).path("type").asString()).isEqualTo("done");
            }
        }
    }

    private void sendTraffic(LocalStack stack) {
        sendCompletedRequests(4);
        // toy-tts runs on both workers too (codec, lm) and gives the lm's worker its KV cache and its gauges
        ObjectNode tts = ToyTtsTests.request("metrics-tts-" + System.nanoTime(), "hello", 8, 0.0, 1, true);
        tts.put("stream", false);
        HttpResponse<String> speech = client.post("/v1/requests", tts.toString(), Map.of());
        assertThat(speech.statusCode()).as(speech.body()).isEqualTo(200);
        for (int i = 0; i < COMPLETED - 5; i++) {
            assertThat(client.post("/v1/requests", MstarClient.counterRequest(null, List.of(4, i), 3, null, false)
                    .toString(), Map.of()).statusCode()).isEqualTo(200);
        }
        // An abort mid-loop (cancellations, abort-to-release) and two rejections (400, 404).
        String id = "metrics-abort-" + System.nanoTime();
        try (MstarClient.Stream stream = client.openStream(MstarClient.counterRequest(id, List.of(1, 2), 4000, null, true))) {
            int tokens = 0;
            while (tokens < 3) {
                JsonNode chunk = stream.next().orElseThrow(() -> new AssertionError("stream ended early"));
                tokens += chunk.path("name").asString().equals("token") ? 1 : 0;
            }
            assertThat(client.post("/admin/requests/" + id + "/abort", "", MstarClient.bearer(stack.adminToken().value()))
                    .statusCode()).isEqualTo(202);
            List<JsonNode> rest = stream.readAll();
            assertThat(rest.get(rest.size() - 1).path("type").asString()).isEqualTo("aborted");
        }
        assertThat(client.post("/v1/requests", "{\"model\": \"counter\", \"inputs\": {}}", Map.of()).statusCode()).isEqualTo(400);
        assertThat(client.post("/v1/requests", "{\"model\": \"no-such-model\", \"inputs\": {\"tokens\": {\"tokens\": [1]}}}",
                Map.of()).statusCode()).isEqualTo(404);
    }


    /** A dashboard expression as Grafana sends it with the variables at "All" and this stack's namespace. */
    private static String grafana(String expr) {
        return expr.replace("$__rate_interval", "1m").replace("$namespace", NAMESPACE).replace("$model", ".*")
                .replace("$worker", ".*");
    }

    private static List<String> only(Map<String, List<String>> panels, String title) {
        assertThat(panels).containsKey(title);
        return panels.get(title);
    }

    /** Panel title to its target expressions, over every dashboard. */
    private static Map<String, List<String>> panelQueries() throws IOException {
        Map<String, List<String>> panels = new java.util.LinkedHashMap<>();
        for (Path dashboard : dashboards()) {
            for (JsonNode panel : MstarClient.JSON.readTree(dashboard.toFile()).path("panels")) {
                List<String> exprs = new ArrayList<>();
                panel.path("targets").forEach(t -> exprs.add(t.path("expr").asText()));
                if (!exprs.isEmpty()) {
                    panels.put(panel.path("title").asText(), exprs);
                }
            }
        }
        return panels;
    }

    private static Path chartDir() {
        return ProjectLayout.discover().root().resolve("helm/mstar");
    }

    private static List<Path> dashboards() throws IOException {
        try (Stream<Path> files = Files.list(chartDir().resolve("dashboards"))) {
            return files.filter(f -> f.toString().endsWith(".json")).sorted().toList();
        }
    }

    private static Set<String> metricNames(String text) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(text);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private static Set<String> seriesNames(String scrape) {
        Set<String> names = new TreeSet<>();
        scrape.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).forEach(l -> names.add(l.split("[{ ]", 2)[0]));
        return names;
    }
}
