package io.mstar.helm;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ServiceMonitor, PrometheusRule and the Grafana dashboards: present when asked and built from values. That each
 * series they query is one the services export is checked against a real scrape in e2e (MetricsCatalogTests).
 */
class MonitoringTests {

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    @AutoClose
    private final Chart chart = new Chart();

    @Test
    void operatorObjectsAreOffByDefault() {
        assertThat(chart.render().kindCounts()).doesNotContainKeys("ServiceMonitor", "PrometheusRule");
    }

    @Test
    void serviceMonitorScrapesThePrometheusEndpointOfBothServices() {
        Chart.Rendered rendered = chart.render(chart.ciValues("external-kafka-values.yaml"));
        GenericKubernetesResource monitor = rendered.generic("ServiceMonitor");

        assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
        assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
        Map<String, Object> spec = monitor.get("spec");
        assertThat(spec).containsOnlyKeys("selector", "namespaceSelector", "endpoints");
        Map<String, String> selector = monitor.get("spec", "selector", "matchLabels");
        List<Map<String, Object>> endpoints = monitor.get("spec", "endpoints");
        assertThat(endpoints).singleElement().satisfies(e -> {
            assertThat(e).containsOnlyKeys("port", "path", "interval", "scrapeTimeout");
            assertThat(e).containsEntry("port", "http").containsEntry("path", "/actuator/prometheus");
        });
        List<Service> scraped = rendered.all(Service.class).stream()
                .filter(s -> s.getMetadata().getLabels().entrySet().containsAll(selector.entrySet())).toList();
        assertThat(scraped).extracting(s -> s.getMetadata().getName()).containsExactlyInAnyOrder("mstar-conductor", "mstar-worker");
        assertThat(scraped).allSatisfy(s -> assertThat(s.getSpec().getPorts()).anySatisfy(p -> assertThat(p.getName()).isEqualTo("http")));
    }

    @Test
    void prometheusRuleSelectsThisReleasesSeriesAndTakesItsThresholdsFromValues(@TempDir Path dir) throws IOException {
        Path thresholds = Files.writeString(dir.resolve("thresholds.yaml"), """
                metrics:
                  prometheusRule:
                    e2eLatency: {p99Seconds: 12.5, for: 10m}
                    consumerLag: {maxRecords: 250, for: 5m}
                    queueGrowing: {minWaiting: 10, window: 15m, for: 5m}
                """);
        GenericKubernetesResource rule = chart.render(chart.ciValues("external-kafka-values.yaml"), thresholds)
                .generic("PrometheusRule");

        List<Map<String, Object>> groups = rule.get("spec", "groups");
        assertThat(groups).hasSize(1);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rules = (List<Map<String, Object>>) groups.get(0).get("rules");
        Map<String, Map<String, Object>> byName = rules.stream().collect(Collectors.toMap(r -> (String) r.get("alert"), r -> r));
        assertThat(rules).allSatisfy(r -> {
            assertThat(r).containsKeys("expr", "labels", "annotations");
            String expr = (String) r.get("expr");
            // Every series selector names the release's namespace and one of its two Services.
            assertThat(expr).contains("namespace=\"inference\"").containsPattern("service=\"mstar-(conductor|worker)\"");
            assertThat(expr).doesNotContain("{{").doesNotContain("<no value>");
        });
        assertThat((String) byName.get("MstarE2ELatencyP99OverSLO").get("expr"))
                .startsWith("histogram_quantile(0.99, sum by (le, model) (rate(mstar_conductor_request_latency_seconds_bucket{")
                .endsWith(") > 12.5");
        assertThat((String) byName.get("MstarKafkaConsumerLag").get("expr")).contains("> 250 or").endsWith("> 250");
        assertThat((String) byName.get("MstarQueueGrowing").get("expr")).contains("[15m]");
        assertThat(byName.get("MstarWorkerNotReady").get("for")).isEqualTo("5m");
        assertThat(byName.get("MstarE2ELatencyP99OverSLO").get("for")).isEqualTo("10m");
        assertThat(byName.get("MstarWorkerNotReady").get("labels")).isEqualTo(Map.of("severity", "critical"));
        // Prometheus' own template syntax must survive Helm's rendering.
        assertThat(((Map<?, ?>) byName.get("MstarWorkerNotReady").get("annotations")).get("description").toString())
                .startsWith("{{ $value }}");
        assertThat(((Map<?, ?>) byName.get("MstarE2ELatencyP99OverSLO").get("annotations")).get("description").toString())
                .contains("{{ $labels.model }}").contains("12.5 s SLO");
    }

    @Test
    void dashboardsConfigMapCarriesEveryDashboardJsonForTheGrafanaSidecar() throws IOException {
        ConfigMap dashboards = chart.render().one(ConfigMap.class, Chart.name("dashboards"));
        List<Path> files = dashboardFiles();

        assertThat(files).isNotEmpty();
        assertThat(dashboards.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        assertThat(dashboards.getData().keySet()).containsExactlyInAnyOrderElementsOf(
                files.stream().map(f -> f.getFileName().toString()).toList());
        for (Path file : files) {
            String shipped = dashboards.getData().get(file.getFileName().toString());
            assertThat(JSON.readTree(shipped)).as(file.toString()).isEqualTo(JSON.readTree(file.toFile()));
        }
    }

    @Test
    void everyDashboardIsAWholeDashboardWithAQueryInEveryPanel() throws IOException {
        Set<String> uids = new TreeSet<>();
        for (Path file : dashboardFiles()) {
            JsonNode dashboard = JSON.readTree(file.toFile());
            assertThat(dashboard.path("uid").asText()).as(file.toString()).isNotBlank();
            assertThat(uids.add(dashboard.path("uid").asText())).as("uid of %s is unique", file).isTrue();
            assertThat(dashboard.path("title").asText()).isNotBlank();
            assertThat(dashboard.path("panels")).isNotEmpty();
            for (JsonNode panel : dashboard.path("panels")) {
                if (panel.path("type").asText().equals("row")) {
                    assertThat(panel.path("title").asText()).isNotBlank();
                    continue;
                }
                assertThat(panel.path("targets")).as("targets of %s", panel.path("title")).isNotEmpty();
                panel.path("targets").forEach(t -> assertThat(t.path("expr").asText()).isNotBlank());
            }
            assertThat(Files.readString(file)).doesNotContainIgnoringCase("todo").doesNotContainIgnoringCase("fixme")
                    .doesNotContainIgnoringCase("changeme");
        }
    }

    private List<Path> dashboardFiles() throws IOException {
        try (Stream<Path> files = Files.list(chart.dir().resolve("dashboards"))) {
            return files.filter(f -> f.toString().endsWith(".json")).sorted().toList();
        }
    }
}
