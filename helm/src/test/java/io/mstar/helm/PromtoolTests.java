package io.mstar.helm;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * promtool (Debian's prometheus package, unpacked into target/ by the build) parses every alert rule and every
 * dashboard query, and {@code promtool test rules} runs src/test/promtool/mstar-rules-test.yaml against the rules
 * the chart renders: each alert fires on its input series and stays quiet on the others.
 */
class PromtoolTests {

    private static final Path TEST_FILE = Path.of("src/test/promtool/mstar-rules-test.yaml");

    @AutoClose
    private final Chart chart = new Chart();

    @Test
    void renderedAlertRulesPassPromtoolCheck(@TempDir Path dir) throws IOException, InterruptedException {
        Path rules = MonitoringFiles.writeRulesFile(chart, dir.resolve("mstar-rules.yaml"));

        MonitoringFiles.Run check = MonitoringFiles.run(dir, List.of(MonitoringFiles.promtool().toString(), "check", "rules",
                rules.toString()));

        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: " + MonitoringFiles.renderedRules(chart).size() + " rules found");
    }

    @Test
    void promtoolUnitTestsPassForTheRenderedRules(@TempDir Path dir) throws IOException, InterruptedException {
        // The test file names mstar-rules.yaml next to itself: the rules exactly as the chart renders them.
        MonitoringFiles.writeRulesFile(chart, dir.resolve("mstar-rules.yaml"));
        Path test = Files.copy(TEST_FILE, dir.resolve(TEST_FILE.getFileName()), StandardCopyOption.REPLACE_EXISTING);

        MonitoringFiles.Run run = MonitoringFiles.run(dir, List.of(MonitoringFiles.promtool().toString(), "test", "rules",
                test.getFileName().toString()));

        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output()).contains("SUCCESS");
    }

    @Test
    void aWrongExpectationFailsTheUnitTests(@TempDir Path dir) throws IOException, InterruptedException {
        MonitoringFiles.writeRulesFile(chart, dir.resolve("mstar-rules.yaml"));
        String wrong = Files.readString(TEST_FILE).replace("pod: mstar-worker-0}", "pod: mstar-worker-1}");
        assertThat(wrong).isNotEqualTo(Files.readString(TEST_FILE));
        Path test = Files.writeString(dir.resolve("wrong-test.yaml"), wrong);

        MonitoringFiles.Run run = MonitoringFiles.run(dir, List.of(MonitoringFiles.promtool().toString(), "test", "rules",
                test.getFileName().toString()));

        assertThat(run.exitCode()).isNotZero();
        assertThat(run.output()).contains("FAILED").contains("MstarTensorsLiveWhileIdle").contains("MstarKafkaConsumerLag");
    }

    @Test
    void everyAlertHasATestWhereItFiresAndOneWhereItStaysQuiet() throws IOException {
        JsonNode tests = MonitoringFiles.YAML.readTree(TEST_FILE.toFile());
        Set<String> fires = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        for (JsonNode test : tests.path("tests")) {
            for (JsonNode alertTest : test.path("alert_rule_test")) {
                String name = alertTest.path("alertname").asText();
                (alertTest.path("exp_alerts").isEmpty() ? quiet : fires).add(name);
            }
        }
        List<String> alerts = MonitoringFiles.renderedRules(chart).stream().map(r -> (String) r.get("alert")).toList();

        assertThat(alerts).containsExactly("MstarE2ELatencyP99OverSLO", "MstarQueueGrowing", "MstarMessagesDeadLettered",
                "MstarTensorsLiveWhileIdle", "MstarWorkerNotReady", "MstarKafkaConsumerLag", "MstarTensorReadsRejected",
                "MstarTensorParallelTrouble");
        assertThat(fires).containsExactlyInAnyOrderElementsOf(alerts);
        assertThat(quiet).containsExactlyInAnyOrderElementsOf(alerts);
    }

    @Test
    void everyDashboardQueryParses(@TempDir Path dir) throws IOException, InterruptedException {
        List<MonitoringFiles.Query> queries = new ArrayList<>();
        for (Path dashboard : MonitoringFiles.dashboards(chart)) {
            queries.addAll(MonitoringFiles.queries(dashboard));
        }
        Path rules = MonitoringFiles.writeQueriesAsRules(queries, dir.resolve("dashboard-queries.yaml"));

        MonitoringFiles.Run check = MonitoringFiles.run(dir, List.of(MonitoringFiles.promtool().toString(), "check", "rules",
                rules.toString()));

        assertThat(queries).hasSizeGreaterThan(40);
        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: " + queries.size() + " rules found");
    }

    @Test
    void promtoolRejectsAQueryThatDoesNotParse(@TempDir Path dir) throws IOException, InterruptedException {
        Path rules = MonitoringFiles.writeQueriesAsRules(List.of(new MonitoringFiles.Query("broken.json", 1, "A",
                "sum by (pod) (rate(mstar_worker_batches_total{pod=~\"$worker\"}[$__rate_interval])")), dir.resolve("broken.yaml"));

        MonitoringFiles.Run check = MonitoringFiles.run(dir, List.of(MonitoringFiles.promtool().toString(), "check", "rules",
                rules.toString()));

        assertThat(check.exitCode()).isNotZero();
        assertThat(check.output()).contains("unclosed left parenthesis");
    }

    @Test
    void grafanaVariablesAreAllReplacedBeforeParsing() throws IOException {
        for (Path dashboard : MonitoringFiles.dashboards(chart)) {
            for (MonitoringFiles.Query q : MonitoringFiles.queries(dashboard)) {
                assertThat(q.promql()).as("%s panel %d %s", q.dashboard(), q.panelId(), q.refId()).doesNotContain("$");
            }
        }
    }
}
