package io.mstar.helm;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** values.schema.json and the chart's own checks refuse bad values before anything reaches a cluster. */
class ValuesSchemaTests {

    @AutoClose
    private final Chart chart = new Chart();

    static Stream<Arguments> schemaViolations() {
        return Stream.of(
                // rule class, values, where the schema error points, what it says
                Arguments.of("type", Map.of("worker.replicas", "two"), "/worker/replicas", "got string, want integer"),
                Arguments.of("enum", Map.of("kafka.mode", "embedded"), "/kafka/mode", "value must be one of"),
                Arguments.of("minimum", Map.of("worker.gpu.count", -1), "/worker/gpu/count", "minimum: got -1, want 0"),
                Arguments.of("maximum", Map.of("worker.dataPort", 70000), "/worker/dataPort", "maximum:"),
                Arguments.of("unknown key", Map.of("worker.gpus", 1), "/worker", "'gpus' not allowed"),
                Arguments.of("pattern", Map.of("conductor.workerLossTimeout", "six seconds"), "/conductor/workerLossTimeout",
                        "does not match pattern"),
                Arguments.of("const (non-root)", Map.of("podSecurityContext.runAsNonRoot", false),
                        "/podSecurityContext/runAsNonRoot", "value must be true"),
                Arguments.of("required when external", Map.of("kafka.mode", "external"), "/kafka/external/bootstrapServers",
                        "minLength: got 0, want 1"),
                Arguments.of("required with SASL", Map.of("kafka.mode", "external",
                        "kafka.external.bootstrapServers", "kafka:9092", "kafka.external.securityProtocol", "SASL_SSL"),
                        "/kafka/external/sasl/existingSecret", "minLength: got 0, want 1"),
                Arguments.of("short admin token", Map.of("adminToken.value", "secret"), "/adminToken/value",
                        "minLength: got 6, want 24"),
                Arguments.of("short data-plane secret", Map.of("dataPlane.value", "x".repeat(31)), "/dataPlane/value",
                        "minLength: got 31, want 32"),
                Arguments.of("data-plane secret with surrounding white space", Map.of("dataPlane.value", " " + "x".repeat(32)),
                        "/dataPlane/value", "does not match pattern"),
                Arguments.of("data-plane authentication", Map.of("dataPlane.authentication", "hmac"),
                        "/dataPlane/authentication", "value must be one of"),
                Arguments.of("SLO above zero", Map.of("metrics.prometheusRule.e2eLatency.p99Seconds", 0),
                        "/metrics/prometheusRule/e2eLatency/p99Seconds", "exclusiveMinimum"),
                Arguments.of("alert duration", Map.of("metrics.prometheusRule.consumerLag.for", "five minutes"),
                        "/metrics/prometheusRule/consumerLag/for", "does not match pattern"),
                Arguments.of("lag threshold", Map.of("metrics.prometheusRule.consumerLag.maxRecords", 0),
                        "/metrics/prometheusRule/consumerLag/maxRecords", "minimum: got 0, want 1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schemaViolations")
    void schemaRejects(String rule, Map<String, Object> values, String pointer, String message) {
        String failure = chart.renderFailure(List.of(), values).orElseThrow(
                () -> new AssertionError(rule + ": values " + values + " rendered"));

        assertThat(failure).contains("values don't meet the specifications of the schema")
                .contains("at '" + pointer + "'").contains(message);
    }

    @Test
    void workerReplicasMustMatchTheDeploymentConfigsWorkers() {
        String failure = chart.renderFailure(List.of(), Map.of("worker.replicas", 3)).orElseThrow();

        assertThat(failure).contains("deploymentConfig names 2 distinct worker ids [0 1] but worker.replicas is 3");
    }

    @Test
    void workerIdsMustBeTheStatefulSetOrdinals() {
        String config = """
                models:
                  - name: counter
                    node_groups:
                      - node_names: [embed, offset, detok]
                        workers: [1]
                      - node_names: [count, step]
                        workers: [2]
                """;

        String failure = chart.renderFailure(List.of(), Map.of("deploymentConfig", config)).orElseThrow();

        assertThat(failure).contains("must name worker ids 0..1").contains("0 is missing");
    }

    @Test
    void aDataPlaneSecretOfExactly32CharactersIsAccepted() {
        assertThat(chart.renderFailure(List.of(), Map.of("dataPlane.value", "x".repeat(32)))).isEmpty();
        assertThat(chart.renderFailure(List.of(), Map.of("dataPlane.value", "x".repeat(31)))).isPresent();
    }

    @Test
    void theShippedValuesAndEveryCiValuesFileAreAccepted() {
        assertThat(chart.renderFailure(List.of(), Map.of())).isEmpty();
        assertThat(chart.renderFailure(List.of(chart.ciValues("external-kafka-values.yaml")), Map.of())).isEmpty();
        assertThat(chart.renderFailure(List.of(chart.ciValues("gpu-workers-values.yaml")), Map.of())).isEmpty();
    }
}
