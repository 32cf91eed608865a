package io.mstar.helm;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.mstar.conductor.lifecycle.WorkerRegistryMeters;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorMessageType;
import io.mstar.wire.WorkerMessageType;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** ServiceMonitor, PrometheusRule and the Grafana dashboards: present when asked, and naming real series. */
class MonitoringTests {

    private static final Pattern METRIC = Pattern.compile("\\b((?:mstar|jvm)_[a-z0-9_]+)\\b");
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
    void prometheusRuleAlertsOnWorkersNotReadyAndDeadLetters() {
        GenericKubernetesResource rule = chart.render(chart.ciValues("external-kafka-values.yaml")).generic("PrometheusRule");

        List<Map<String, Object>> groups = rule.get("spec", "groups");
        assertThat(groups).hasSize(1);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rules = (List<Map<String, Object>>) groups.get(0).get("rules");
        assertThat(rules).extracting(r -> r.get("alert")).containsExactly("MstarWorkerNotReady", "MstarMessagesDeadLettered");
        assertThat(rules).allSatisfy(r -> assertThat(r).containsKeys("expr", "labels", "annotations"));
        assertThat((String) rules.get(0).get("expr")).contains("mstar_conductor_workers{").contains("state!=\"ready\"")
                .contains("namespace=\"inference\"").endsWith("> 0");
        assertThat(rules.get(0).get("for")).isEqualTo("5m");
        assertThat((String) rules.get(1).get("expr")).contains("mstar_(conductor|worker)_messages_dead_lettered_total").endsWith("> 0");
        // Prometheus' own template syntax must survive Helm's rendering.
        assertThat(((Map<?, ?>) rules.get(0).get("annotations")).get("description").toString()).startsWith("{{ $value }}");
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
                assertThat(panel.path("targets")).as("targets of %s", panel.path("title")).isNotEmpty();
                panel.path("targets").forEach(t -> assertThat(t.path("expr").asText()).isNotBlank());
            }
            assertThat(Files.readString(file)).doesNotContainIgnoringCase("todo").doesNotContainIgnoringCase("fixme")
                    .doesNotContainIgnoringCase("changeme");
        }
    }

    @Test
    void everySeriesTheDashboardsAndAlertsQueryIsOneTheServicesExport() throws IOException {
        Set<String> queried = new TreeSet<>();
        for (Path file : dashboardFiles()) {
            for (JsonNode panel : JSON.readTree(file.toFile()).path("panels")) {
                panel.path("targets").forEach(t -> queried.addAll(metricNames(t.path("expr").asText())));
            }
        }
        GenericKubernetesResource rule = chart.render(chart.ciValues("external-kafka-values.yaml")).generic("PrometheusRule");
        List<Map<String, Object>> groups = rule.get("spec", "groups");
        for (Object r : (List<?>) groups.get(0).get("rules")) {
            String expr = (String) ((Map<?, ?>) r).get("expr");
            // The dead-letter rule matches its two series through a __name__ regex.
            queried.addAll(metricNames(expr.replace("mstar_(conductor|worker)_messages_dead_lettered_total",
                    "mstar_conductor_messages_dead_lettered_total mstar_worker_messages_dead_lettered_total")));
        }

        assertThat(queried).contains("mstar_conductor_workers", "mstar_conductor_messages_received_total",
                "mstar_conductor_messages_dead_lettered_total", "mstar_worker_messages_sent_total", "jvm_memory_used_bytes");
        assertThat(exportedSeries()).containsAll(queried);
    }

    /** The series names the services' own meters produce in the Prometheus format. */
    private static Set<String> exportedSeries() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (ControlPlaneMeters conductor = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.CONDUCTOR);
             ControlPlaneMeters worker = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.WORKER);
             WorkerRegistryMeters workers = new WorkerRegistryMeters(registry, List.of(EntityId.worker(0)))) {
            List<String> toWorkers = Arrays.stream(WorkerMessageType.values()).map(WorkerMessageType::value).toList();
            List<String> toConductor = Arrays.stream(ConductorMessageType.values()).map(ConductorMessageType::value).toList();
            conductor.declareMessageTypes(toWorkers, toConductor);
            worker.declareMessageTypes(toConductor, toWorkers);
            new JvmMemoryMetrics().bindTo(registry);
            return registry.scrape().lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                    .map(l -> l.split("[{ ]", 2)[0]).collect(Collectors.toCollection(TreeSet::new));
        } finally {
            registry.close();
        }
    }

    private static List<String> metricNames(String expr) {
        List<String> names = new ArrayList<>();
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private List<Path> dashboardFiles() throws IOException {
        try (Stream<Path> files = Files.list(chart.dir().resolve("dashboards"))) {
            return files.filter(f -> f.toString().endsWith(".json")).sorted().toList();
        }
    }
}
