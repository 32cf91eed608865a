package io.mstar.helm;

import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.mstar.deployment.DeploymentConfig;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The chart lints strictly and renders, for each shipped values file, into well-formed typed objects. */
class ChartRenderTests {

    @AutoClose
    private final Chart chart = new Chart();

    @Test
    void strictLintPasses() {
        LintResult result = chart.helm().lint().strict().call();

        assertThat(result.isFailed()).as("lint messages %s", result.getMessages()).isFalse();
        assertThat(result.getMessages()).noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
    }

    static Stream<Arguments> valuesFiles() {
        return Stream.of(
                Arguments.of("default", List.of()),
                Arguments.of("external-kafka", List.of("external-kafka-values.yaml")),
                Arguments.of("gpu-workers", List.of("gpu-workers-values.yaml")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void everyRenderedObjectParsesIntoItsTypedModelWithNoUnknownField(String label, List<String> files) {
        Chart.Rendered rendered = chart.render(files.stream().map(chart::ciValues).toArray(Path[]::new));

        assertThat(rendered.objects()).isNotEmpty();
        for (HasMetadata object : rendered.objects()) {
            String id = object.getKind() + "/" + object.getMetadata().getName();
            boolean operatorKind = object.getApiVersion().startsWith("monitoring.coreos.com/");
            assertThat(object instanceof GenericKubernetesResource).as("%s has a typed model", id).isEqualTo(operatorKind);
            assertThat(UnknownFields.in(object)).as("unknown fields in %s", id).isEmpty();
            assertThat(object.getMetadata().getLabels())
                    .as("labels of %s", id)
                    .containsEntry("app.kubernetes.io/instance", Chart.RELEASE)
                    .containsEntry("app.kubernetes.io/managed-by", "Helm");
        }
        assertThat(rendered.summary()).doesNotHaveDuplicates();
    }

    @Test
    void defaultValuesRenderTheBundledBrokerAndNoOperatorObjects() {
        Chart.Rendered rendered = chart.render();

        assertThat(rendered.kindCounts()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "ServiceAccount", 1, "Secret", 2, "ConfigMap", 2, "Service", 3, "Deployment", 1,
                "StatefulSet", 2, "NetworkPolicy", 3, "PodDisruptionBudget", 1));
        assertThat(rendered.one(StatefulSet.class, Chart.name("kafka")).getSpec().getTemplate().getSpec()
                .getContainers().get(0).getImage()).startsWith("apache/kafka:");
    }

    @Test
    void externalKafkaRendersNoBrokerAndNoSecretButTheOperatorObjects() {
        Chart.Rendered rendered = chart.render(chart.ciValues("external-kafka-values.yaml"));

        assertThat(rendered.find(StatefulSet.class, Chart.name("kafka"))).isEmpty();
        assertThat(rendered.find(Service.class, Chart.name("kafka"))).isEmpty();
        assertThat(rendered.kindCounts()).doesNotContainKey("Secret").containsEntry("ServiceMonitor", 1)
                .containsEntry("PrometheusRule", 1).containsEntry("NetworkPolicy", 2);
    }

    @Test
    void defaultDeploymentConfigIsTheServicesBuiltInOne() {
        String shipped = chart.render().one(ConfigMap.class, Chart.name("deployment-config")).getData().get("deployment.yaml");

        DeploymentConfig parsed = DeploymentConfig.parse(shipped, "chart default");

        assertThat(parsed.digest()).isEqualTo(DeploymentConfig.loadDefault().digest());
        assertThat(parsed.workerOrdinals()).containsExactly(0, 1);
    }

    @Test
    void gpuValuesDeploymentConfigParsesWithTheServicesParserAndNamesEveryReplica() {
        Chart.Rendered rendered = chart.render(chart.ciValues("gpu-workers-values.yaml"));
        String shipped = rendered.one(ConfigMap.class, Chart.name("deployment-config")).getData().get("deployment.yaml");

        DeploymentConfig parsed = DeploymentConfig.parse(shipped, "gpu-workers-values.yaml");

        int replicas = rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getReplicas();
        assertThat(replicas).isEqualTo(4);
        assertThat(parsed.workerOrdinals()).containsExactly(0, 1, 2, 3);
    }

    @Test
    void theReadmesKubernetesExampleRendersWithGpusAndExternalKafka(@TempDir Path dir) throws IOException {
        String readme = Files.readString(chart.repoRoot().resolve("README.md"));
        Matcher block = Pattern.compile("```yaml\n# gpu-values.yaml\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertThat(block.find()).as("README's Kubernetes section has the gpu-values.yaml example").isTrue();
        Path values = Files.writeString(dir.resolve("gpu-values.yaml"), block.group(1));

        Chart.Rendered rendered = chart.render(values);

        StatefulSet workers = rendered.one(StatefulSet.class, Chart.name("worker"));
        assertThat(workers.getSpec().getTemplate().getSpec().getContainers().get(0).getResources().getLimits())
                .containsKey("nvidia.com/gpu");
        assertThat(workers.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()).isEqualTo("REGISTRY/mstar/worker:TAG");
        assertThat(rendered.find(StatefulSet.class, Chart.name("kafka"))).isEmpty();
        assertThat(rendered.objects()).allSatisfy(o -> assertThat(UnknownFields.in(o)).isEmpty());
    }
}
