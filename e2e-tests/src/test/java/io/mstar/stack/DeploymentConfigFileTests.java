package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.mstar.deployment.DeploymentConfig;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The YAML the stack writes is one the services' own parser accepts, placing every worker. */
class DeploymentConfigFileTests {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7})
    void generatedConfigParsesAndPlacesEveryWorkerExactlyOnce(int workers) {
        DeploymentConfig config = DeploymentConfig.parse(DeploymentConfigFile.yaml(workers), "stack-" + workers);

        List<Integer> expected = IntStream.range(0, workers).boxed().toList();
        assertThat(config.workerOrdinals()).containsExactlyElementsOf(expected);
    }

    @Test
    void twoWorkersDeployEveryModelAsTheServicesBuiltInConfigPlacesIt() {
        DeploymentConfig generated = DeploymentConfig.parse(DeploymentConfigFile.yaml(2), "stack-2");

        // bin/mstar up serves what the services serve without a config file
        assertThat(generated.models()).isEqualTo(DeploymentConfig.loadDefault().models());
    }

    @Test
    void admissionLimitsReachTheParsedConfig() {
        DeploymentConfig config = DeploymentConfig.parse(
                DeploymentConfigFile.yaml(2, new DeploymentConfigFile.Admission(1, 3)), "admission");

        assertThat(config.maxConcurrentRequests()).isEqualTo(1);
        assertThat(config.maxQueuedRequests()).isEqualTo(3);
    }

    @Test
    void zeroWorkersIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> DeploymentConfigFile.yaml(0));
    }
}
