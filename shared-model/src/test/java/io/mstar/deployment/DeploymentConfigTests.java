package io.mstar.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DeploymentConfigTests {

    private static final String FULL = """
            max_concurrent_requests: 8
            max_queued_requests: 16
            request_timeout: 10m
            models:
              - name: toy-tts
                kv_cache: {page_size: 16, max_num_pages: 4096}
                node_groups:
                  - node_names: [llm]
                    workers: [3, 2]
                    tp_size: 2
                    graph_walks: [prefill, decode]
                  - node_names: [codec]
                    workers: [1]
              - name: minilm-embed
                node_groups:
                  - node_names: [encoder]
                    workers: [0, 1]
            """;

    @Test
    void defaultResourceHasTwoWorkersTheCounterToyTtsAndMiniLm() {
        DeploymentConfig config = DeploymentConfig.loadDefault();

        assertThat(config.workerOrdinals()).containsExactly(0, 1);
        assertThat(config.models()).extracting(ModelConfig::name).containsExactly("counter", "toy-tts", "minilm-embed");
        assertThat(config.models().get(0).name()).isEqualTo("counter");
        ModelConfig tts = config.models().stream().filter(m -> m.name().equals("toy-tts")).findFirst().orElseThrow();
        assertThat(tts.kvCache()).isPresent();
        assertThat(tts.nodeGroups()).extracting(NodeGroupConfig::nodeNames, NodeGroupConfig::workers)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(List.of("codec"), List.of(0)),
                        org.assertj.core.groups.Tuple.tuple(List.of("lm"), List.of(1)));
        assertThat(config.models().get(0).nodeGroups())
                .extracting(NodeGroupConfig::nodeNames, NodeGroupConfig::workers)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(List.of("embed", "offset", "detok"), List.of(0)),
                        org.assertj.core.groups.Tuple.tuple(List.of("count", "step"), List.of(1)));
        assertThat(config.models().get(2).nodeGroups())
                .extracting(NodeGroupConfig::nodeNames, NodeGroupConfig::workers)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(List.of("encode"), List.of(0)));
        assertThat(config.maxConcurrentRequests()).isEqualTo(64);
    }

    @Test
    void parsesEveryKeyOfTheArchitectureExample() {
        DeploymentConfig config = DeploymentConfig.parse(FULL, "full.yaml");

        assertThat(config.maxConcurrentRequests()).isEqualTo(8);
        assertThat(config.maxQueuedRequests()).isEqualTo(16);
        assertThat(config.requestTimeout()).isEqualTo(Duration.ofMinutes(10));
        ModelConfig tts = config.models().get(0);
        assertThat(tts.kvCache()).contains(new KvCacheConfig(16, 4096));
        assertThat(tts.nodeGroups().get(0)).isEqualTo(
                new NodeGroupConfig(List.of("llm"), List.of(3, 2), 2, List.of("prefill", "decode")));
        assertThat(tts.nodeGroups().get(1).tpSize()).isEqualTo(1);
        assertThat(tts.nodeGroups().get(1).graphWalks()).isEmpty();
        assertThat(config.models().get(1).kvCache()).isEmpty();
    }

    @Test
    void workerOrdinalsAreTheSortedUnionOfEveryGroup() {
        assertThat(DeploymentConfig.parse(FULL, "full.yaml").workerOrdinals()).containsExactly(0, 1, 2, 3);
    }

    @Test
    void omittedKeysTakeTheDocumentedDefaults() {
        DeploymentConfig config = DeploymentConfig.parse("models: [{name: m, node_groups: [{node_names: [a], workers: [0]}]}]", "min");

        assertThat(config.maxConcurrentRequests()).isEqualTo(64);
        assertThat(config.maxQueuedRequests()).isEqualTo(256);
        assertThat(config.requestTimeout()).isEqualTo(Duration.ofSeconds(600));
        assertThat(config.models().get(0).nodeGroups().get(0).tpSize()).isEqualTo(1);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            models: []                                                                   | models: must not be empty
            max_concurrent_requests: 0                                                   | max_concurrent_requests: must be at least 1
            request_timeout: soon                                                        | request_timeout: must be a duration
            models: [{name: m, node_groups: [{node_names: [a], workers: [0]}, {node_names: [b], workers: []}]}] | models[0].node_groups[1].workers: must not be empty
            models: [{name: m, node_groups: [{node_names: [a], workers: [0], tp_szie: 2}]}] | models[0].node_groups[0].tp_szie: unknown key
            models: [{name: m, node_groups: [{node_names: [a], workers: [0, 1, 2], tp_size: 2}]}] | models[0].node_groups[0].workers: 3 workers do not split
            models: [{name: m, node_groups: [{node_names: [a], workers: [0, 0]}]}]       | models[0].node_groups[0].workers[1]: worker 0 is listed twice
            models: [{name: m, node_groups: [{node_names: [a], workers: [-1]}]}]         | models[0].node_groups[0].workers[0]: must be at least 0
            models: [{name: m, node_groups: [{node_names: [a], workers: [x]}]}]          | models[0].node_groups[0].workers[0]: must be an integer
            models: [{node_groups: [{node_names: [a], workers: [0]}]}]                   | models[0].name: is required
            models: [{name: m, node_groups: [{node_names: [a], workers: [0]}, {node_names: [a], workers: [1]}]}] | models[0].node_groups[1].node_names: node 'a' is already placed
            models: [{name: m, kv_cache: {page_size: 0, max_num_pages: 4}, node_groups: [{node_names: [a], workers: [0]}]}] | models[0].kv_cache.page_size: must be at least 1
            models: [{name: m, node_groups: [{node_names: [a], workers: [0]}]}, {name: m, node_groups: [{node_names: [a], workers: [0]}]}] | models[1].name: duplicate model name
            models: [{name: m, node_groups: [{node_names: [a], workers: [0], graph_walks: []}]}] | models[0].node_groups[0].graph_walks: must not be empty
            """)
    void invalidConfigsNameTheOffendingKey(String yaml, String expected) {
        assertThatThrownBy(() -> DeploymentConfig.parse(yaml, "bad.yaml"))
                .isInstanceOf(DeploymentConfigException.class)
                .hasMessageStartingWith("bad.yaml: ")
                .hasMessageContaining(expected);
    }

    @Test
    void theExceptionCarriesTheKeyPath() {
        assertThatThrownBy(() -> DeploymentConfig.parse(
                "models: [{name: m, node_groups: [{node_names: [a], workers: [0]}, {node_names: [b], workers: []}]}]", "x"))
                .isInstanceOfSatisfying(DeploymentConfigException.class,
                        e -> assertThat(e.key()).isEqualTo("models[0].node_groups[1].workers"));
    }

    @Test
    void aMissingFileAndBrokenYamlAreReportedAsConfigErrors(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> DeploymentConfig.load(dir.resolve("absent.yaml")))
                .isInstanceOf(DeploymentConfigException.class).hasMessageContaining("cannot read file");
        Path broken = Files.writeString(dir.resolve("broken.yaml"), "models: [unclosed");
        assertThatThrownBy(() -> DeploymentConfig.load(broken))
                .isInstanceOf(DeploymentConfigException.class).hasMessageContaining("not valid YAML");
    }

    @Test
    void loadOrDefaultReadsTheFileOrFallsBackWhenBlank(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("d.yaml"), FULL);

        assertThat(DeploymentConfig.loadOrDefault(file.toString()).workerOrdinals()).containsExactly(0, 1, 2, 3);
        assertThat(DeploymentConfig.loadOrDefault("")).isEqualTo(DeploymentConfig.loadDefault());
        assertThat(DeploymentConfig.loadOrDefault(null)).isEqualTo(DeploymentConfig.loadDefault());
    }
}
