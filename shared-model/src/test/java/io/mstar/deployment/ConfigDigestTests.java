package io.mstar.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConfigDigestTests {

    private static final String PLAIN = """
            max_concurrent_requests: 64
            request_timeout: 600s
            models:
              - name: counter
                node_groups:
                  - node_names: [embed, offset, detok]
                    workers: [0]
                  - node_names: [count, step]
                    workers: [1]
            """;

    /** Same meaning: comments, flow style, other key order, quoting, explicit defaults, timeout in minutes. */
    private static final String REFORMATTED = """
            # the same deployment, written differently
            models:
              - node_groups: [{workers: [0], node_names: ["embed", offset, "detok"], tp_size: 1},
                              {node_names: ['count', step], workers: [1]}]   # second group
                name: "counter"
            request_timeout: 10m
            max_queued_requests: 256
            max_concurrent_requests: 64
            """;

    @Test
    void isAHexSha256() {
        assertThat(DeploymentConfig.parse(PLAIN, "a").digest().hex()).matches("[0-9a-f]{64}");
    }

    @Test
    void filesThatDifferOnlyInFormattingHaveTheSameDigest() {
        assertThat(DeploymentConfig.parse(REFORMATTED, "b").digest())
                .isEqualTo(DeploymentConfig.parse(PLAIN, "a").digest());
    }

    @Test
    void theDefaultResourceHasTheDigestOfItsContent() {
        String withMiniLm = PLAIN + """
                  - name: minilm-embed
                    node_groups:
                      - node_names: [encode]
                        workers: [0]
                """;
        assertThat(DeploymentConfig.loadDefault().digest()).isEqualTo(DeploymentConfig.parse(withMiniLm, "a").digest());
    }

    @Test
    void anyMeaningfulChangeChangesTheDigest() {
        ConfigDigest base = DeploymentConfig.parse(PLAIN, "a").digest();

        assertThat(DeploymentConfig.parse(PLAIN.replace("workers: [1]", "workers: [2]"), "b").digest()).isNotEqualTo(base);
        assertThat(DeploymentConfig.parse(PLAIN.replace("600s", "601s"), "c").digest()).isNotEqualTo(base);
        assertThat(DeploymentConfig.parse(PLAIN.replace("counter", "counter2"), "d").digest()).isNotEqualTo(base);
        assertThat(DeploymentConfig.parse(PLAIN.replace("workers: [0]", "workers: [0]\n        graph_walks: [prefill]"), "e")
                .digest()).isNotEqualTo(base);
    }

    @Test
    void workerOrderIsPartOfTheDigestBecauseItPicksTensorParallelRanks() {
        String a = "models: [{name: m, node_groups: [{node_names: [x], workers: [0, 1], tp_size: 2}]}]";
        String b = "models: [{name: m, node_groups: [{node_names: [x], workers: [1, 0], tp_size: 2}]}]";

        assertThat(DeploymentConfig.parse(a, "a").digest()).isNotEqualTo(DeploymentConfig.parse(b, "b").digest());
    }

    @Test
    void canonicalFormHasSortedKeysAndAppliedDefaults() {
        assertThat(ConfigDigest.canonicalForm(DeploymentConfig.parse(PLAIN, "a"))).isEqualTo(
                "{\"max_concurrent_requests\":64,\"max_queued_requests\":256,\"models\":[{\"name\":\"counter\","
                        + "\"node_groups\":[{\"graph_walks\":[],\"node_names\":[\"embed\",\"offset\",\"detok\"],\"tp_size\":1,\"workers\":[0]},"
                        + "{\"graph_walks\":[],\"node_names\":[\"count\",\"step\"],\"tp_size\":1,\"workers\":[1]}]}],"
                        + "\"request_timeout_ms\":600000}");
    }
}
