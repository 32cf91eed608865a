package io.mstar.helm;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboards' queries and the rendered alert rules as files the external checkers (promtool, tsc) read. */
final class MonitoringFiles {

    static final ObjectMapper JSON = JsonMapper.builder().build();
    static final YAMLMapper YAML = YAMLMapper.builder().build();

    /** One PromQL expression of a dashboard panel. */
    record Query(String dashboard, int panelId, String refId, String expr) {

        /** The expression with Grafana's variables replaced by values PromQL accepts. */
        String promql() {
            return expr.replace("$__rate_interval", "5m").replace("${datasource}", "prometheus")
                    .replace("$namespace", "inference").replace("$model", ".*").replace("$worker", ".*");
        }
    }

    record Run(int exitCode, String output) {
    }

    private MonitoringFiles() {
    }

    static List<Path> dashboards(Chart chart) throws IOException {
        try (Stream<Path> files = Files.list(chart.dir().resolve("dashboards"))) {
            return files.filter(f -> f.toString().endsWith(".json")).sorted().toList();
        }
    }

    /** Every panel target's expression, rows' nested panels included. */
    static List<Query> queries(Path dashboard) throws IOException {
        List<Query> queries = new ArrayList<>();
        collect(dashboard.getFileName().toString(), JSON.readTree(dashboard.toFile()).path("panels"), queries);
        return queries;
    }

    private static void collect(String dashboard, JsonNode panels, List<Query> into) {
        for (JsonNode panel : panels) {
            for (JsonNode target : panel.path("targets")) {
                into.add(new Query(dashboard, panel.path("id").asInt(), target.path("refId").asText(),
                        target.path("expr").asText()));
            }
            collect(dashboard, panel.path("panels"), into);
        }
    }

    /** The PrometheusRule's groups as rendered with the external-Kafka CI values (rules enabled). */
    static GenericKubernetesResource renderedRule(Chart chart) {
        return chart.render(chart.ciValues("external-kafka-values.yaml")).generic("PrometheusRule");
    }

    /** The rendered PrometheusRule's spec as a plain Prometheus rules file (what promtool and a plain Prometheus read). */
    static Path writeRulesFile(Chart chart, Path file) throws IOException {
        Map<String, Object> spec = renderedRule(chart).get("spec");
        Files.createDirectories(file.getParent());
        Files.writeString(file, YAML.writeValueAsString(spec));
        return file;
    }

    /** The rules of the rendered PrometheusRule, in order. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> renderedRules(Chart chart) {
        List<Map<String, Object>> groups = renderedRule(chart).get("spec", "groups");
        List<Map<String, Object>> rules = new ArrayList<>();
        groups.forEach(g -> rules.addAll((List<Map<String, Object>>) g.get("rules")));
        return rules;
    }

    /** Every dashboard query as a recording rule, so that promtool parses each expression. */
    static Path writeQueriesAsRules(List<Query> queries, Path file) throws IOException {
        List<Map<String, Object>> rules = new ArrayList<>();
        for (Query q : queries) {
            Map<String, Object> rule = new LinkedHashMap<>();
            rule.put("record", "dashboard:" + q.dashboard().replaceAll("[^a-zA-Z0-9]", "_") + ":panel_" + q.panelId()
                    + "_" + q.refId());
            rule.put("expr", q.promql());
            rules.add(rule);
        }
        Files.createDirectories(file.getParent());
        Files.writeString(file, YAML.writeValueAsString(Map.of("groups", List.of(Map.of("name", "dashboards",
                "rules", rules)))));
        return file;
    }

    static Path promtool() {
        Path promtool = Path.of(System.getProperty("mstar.prometheus.dir", "target/prometheus"), "usr/bin/promtool");
        assertThat(promtool).as("the build unpacks Debian's prometheus package (tools/fetch-prometheus.sh)").isExecutable();
        return promtool;
    }

    static Run run(Path workingDirectory, List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
        return new Run(process.exitValue(), output);
    }
}
