package io.mstar.helm;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** What the conductor and worker pods are given: ports, probes, GPUs, volumes, identity, security, drain. */
class WorkloadTests {

    @AutoClose
    private final Chart chart = new Chart();

    private static Container only(PodSpec pod) {
        assertThat(pod.getContainers()).hasSize(1);
        return pod.getContainers().get(0);
    }

    private static Optional<EnvVar> env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst();
    }

    private static String envValue(Container container, String name) {
        return env(container, name).orElseThrow(() -> new AssertionError("no env " + name)).getValue();
    }

    @Test
    void gpuWorkersRequestAndLimitTheirGpusOnTheGpuNodePool() {
        StatefulSet workers = chart.render(chart.ciValues("gpu-workers-values.yaml")).one(StatefulSet.class, Chart.name("worker"));
        PodSpec pod = workers.getSpec().getTemplate().getSpec();
        Container worker = only(pod);

        assertThat(workers.getSpec().getReplicas()).isEqualTo(4);
        assertThat(worker.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("2"))
                .containsEntry("memory", new Quantity("96Gi"));
        assertThat(worker.getResources().getRequests()).containsEntry("nvidia.com/gpu", new Quantity("2"))
                .containsEntry("cpu", new Quantity("8"));
        assertThat(pod.getNodeSelector()).containsEntry("nvidia.com/gpu.product", "NVIDIA-H200");
        assertThat(pod.getTolerations()).singleElement().satisfies(t -> {
            assertThat(t.getKey()).isEqualTo("nvidia.com/gpu");
            assertThat(t.getEffect()).isEqualTo("NoSchedule");
        });
        assertThat(pod.getAffinity().getPodAntiAffinity().getPreferredDuringSchedulingIgnoredDuringExecution()).hasSize(1);
        Volume shm = pod.getVolumes().stream().filter(v -> v.getName().equals("dshm")).findFirst().orElseThrow();
        assertThat(shm.getEmptyDir().getMedium()).isEqualTo("Memory");
        assertThat(shm.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("16Gi"));
        assertThat(worker.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo("dshm");
            assertThat(m.getMountPath()).isEqualTo("/dev/shm");
        });
    }

    @Test
    void defaultWorkersTakeOneGpuEachAndCpuOnlyWorkersNone() {
        Container gpu = only(chart.render().one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec());
        Container cpu = only(chart.renderWith(Map.of("worker.gpu.count", 0)).one(StatefulSet.class, Chart.name("worker"))
                .getSpec().getTemplate().getSpec());

        assertThat(gpu.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("1"));
        assertThat(gpu.getResources().getRequests()).containsEntry("nvidia.com/gpu", new Quantity("1"));
        assertThat(cpu.getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");
        assertThat(cpu.getResources().getRequests()).doesNotContainKey("nvidia.com/gpu");
    }

    @Test
    void workerIdIsThePodOrdinalFromThePodIndexLabel() {
        Container worker = only(chart.render().one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec());

        EnvVar id = env(worker, "MSTAR_WORKER_ID").orElseThrow();
        assertThat(id.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.labels['apps.kubernetes.io/pod-index']");
        assertThat(worker.getCommand()).isEmpty();
    }

    @Test
    void podNameOrdinalSourceCutsTheOrdinalOffThePodNameInAShellWrapper() {
        Container worker = only(chart.renderWith(Map.of("worker.ordinalSource", "podName"))
                .one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec());

        assertThat(env(worker, "MSTAR_WORKER_ID")).isEmpty();
        assertThat(env(worker, "MSTAR_POD_NAME").orElseThrow().getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
        assertThat(worker.getCommand()).hasSize(3).startsWith("/bin/sh", "-c");
        assertThat(worker.getCommand().get(2))
                .contains("export MSTAR_WORKER_ID=\"${MSTAR_POD_NAME##*-}\"")
                .contains("exec java -XX:MaxRAMPercentage=75 -jar /opt/mstar/worker.jar");
    }

    @Test
    void workersExposeHttpAndDataPortsThroughAHeadlessService() {
        Chart.Rendered rendered = chart.renderWith(Map.of("worker.dataPort", 7400));
        Container worker = only(rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec());
        Service headless = rendered.one(Service.class, Chart.name("worker"));

        assertThat(worker.getPorts()).extracting(p -> p.getName() + ":" + p.getContainerPort()).containsExactly("http:8081", "data:7400");
        assertThat(envValue(worker, "MSTAR_WORKER_DATA_PORT")).isEqualTo("7400");
        assertThat(envValue(worker, "SERVER_PORT")).isEqualTo("8081");
        assertThat(envValue(worker, "MSTAR_WORKER_DATA_ADVERTISED_HOST")).isEqualTo("$(MSTAR_POD_NAME).mstar-worker.inference.svc");
        assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(headless.getSpec().getPorts()).extracting(ServicePort::getName, ServicePort::getPort)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("http", 8081), org.assertj.core.groups.Tuple.tuple("data", 7400));
        assertThat(rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getServiceName()).isEqualTo(headless.getMetadata().getName());
    }

    @Test
    void bothServicesProbeTheActuatorHealthGroups() {
        Chart.Rendered rendered = chart.render();
        List<Container> containers = List.of(
                only(rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec()),
                only(rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec()));

        for (Container c : containers) {
            assertThat(c.getLivenessProbe().getHttpGet().getPath()).as(c.getName()).isEqualTo("/actuator/health/liveness");
            assertThat(c.getReadinessProbe().getHttpGet().getPath()).as(c.getName()).isEqualTo("/actuator/health/readiness");
            assertThat(c.getStartupProbe().getHttpGet().getPath()).as(c.getName()).isEqualTo("/actuator/health/liveness");
            assertThat(c.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("http");
        }
    }

    @Test
    void everyMstarPodRunsAsNonRootWithAReadOnlyRootAndWritableTmp() {
        Chart.Rendered rendered = chart.render();
        List<PodSpec> pods = List.of(rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec(),
                rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec());

        for (PodSpec pod : pods) {
            Container c = only(pod);
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).as(c.getName()).isTrue();
            assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(10001L);
            assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).as(c.getName()).isTrue();
            assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
            assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
            assertThat(c.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
            assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        }
        PodSpec kafka = rendered.one(StatefulSet.class, Chart.name("kafka")).getSpec().getTemplate().getSpec();
        assertThat(kafka.getSecurityContext().getRunAsNonRoot()).isTrue();
    }

    @Test
    void terminationGracePeriodCoversPreStopSleepAndSpringShutdownPhase() {
        Chart.Rendered rendered = chart.render(chart.ciValues("gpu-workers-values.yaml"));
        PodSpec worker = rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec();
        PodSpec conductor = rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec();

        assertDrainCovered(worker, 10, 120);
        assertDrainCovered(conductor, 5, 30);
    }

    private static void assertDrainCovered(PodSpec pod, int preStop, int shutdown) {
        Container c = only(pod);
        assertThat(c.getLifecycle().getPreStop().getExec().getCommand()).containsExactly("sleep", String.valueOf(preStop));
        assertThat(envValue(c, "SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE")).isEqualTo(shutdown + "s");
        assertThat(pod.getTerminationGracePeriodSeconds()).as(c.getName()).isGreaterThan((long) preStop + shutdown);
    }

    @Test
    void conductorReadsTheAdminTokenFromTheSecretMountedAsAFile() {
        Chart.Rendered rendered = chart.render();
        PodSpec pod = rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec();
        Container conductor = only(pod);

        Volume token = pod.getVolumes().stream().filter(v -> v.getName().equals("admin-token")).findFirst().orElseThrow();
        assertThat(token.getSecret().getSecretName()).isEqualTo("mstar-admin-token");
        assertThat(conductor.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo("admin-token");
            assertThat(m.getMountPath()).isEqualTo("/etc/mstar/admin");
            assertThat(m.getReadOnly()).isTrue();
        });
        assertThat(envValue(conductor, "MSTAR_CONDUCTOR_ADMIN_TOKEN_FILE")).isEqualTo("/etc/mstar/admin/token");
        assertThat(conductor.getEnv()).noneMatch(e -> e.getName().contains("TOKEN") && e.getValue() != null
                && !e.getValue().startsWith("/"));
    }

    @Test
    void conductorServesInputsOnAFixedDataPortAtItsPodIp() {
        Container conductor = only(chart.render().one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec());

        assertThat(conductor.getPorts()).extracting(p -> p.getName() + ":" + p.getContainerPort()).containsExactly("http:8080", "data:7301");
        assertThat(envValue(conductor, "MSTAR_CONDUCTOR_DATA_PORT")).isEqualTo("7301");
        assertThat(env(conductor, "MSTAR_CONDUCTOR_DATA_ADVERTISED_HOST").orElseThrow().getValueFrom().getFieldRef().getFieldPath())
                .isEqualTo("status.podIP");
    }

    @Test
    void everyPodLoadsTheSameDeploymentConfigAndKafkaSettings() {
        Chart.Rendered rendered = chart.render();
        for (Container c : List.of(only(rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec()),
                only(rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec()))) {
            assertThat(envValue(c, "MSTAR_DEPLOYMENT_CONFIG")).isEqualTo("/etc/mstar/deployment/deployment.yaml");
            assertThat(envValue(c, "SPRING_KAFKA_BOOTSTRAP_SERVERS")).isEqualTo("mstar-kafka:9092");
            assertThat(envValue(c, "MSTAR_MESSAGING_TOPIC_PREFIX")).isEqualTo("mstar");
            assertThat(env(c, "JAVA_TOOL_OPTIONS")).as("the image sizes the heap; no flags unless asked").isEmpty();
            assertThat(c.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/etc/mstar/deployment"));
        }
        String conductorSum = rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getMetadata()
                .getAnnotations().get("checksum/deployment-config");
        String workerSum = rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getMetadata()
                .getAnnotations().get("checksum/deployment-config");
        assertThat(conductorSum).hasSize(64).isEqualTo(workerSum);
    }

    @Test
    void externalKafkaPassesSaslCredentialsFromTheSecretAndTrustsTheGivenCa() {
        Chart.Rendered rendered = chart.render(chart.ciValues("external-kafka-values.yaml"));
        PodSpec pod = rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec();
        Container worker = only(pod);

        assertThat(envValue(worker, "SPRING_KAFKA_BOOTSTRAP_SERVERS")).startsWith("kafka-0.kafka.infra.svc:9093,");
        assertThat(envValue(worker, "SPRING_KAFKA_SECURITY_PROTOCOL")).isEqualTo("SASL_SSL");
        assertThat(envValue(worker, "SPRING_KAFKA_PROPERTIES_SASL_MECHANISM")).isEqualTo("SCRAM-SHA-512");
        EnvVar password = env(worker, "KAFKA_SASL_PASSWORD").orElseThrow();
        assertThat(password.getValue()).isNull();
        assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo("mstar-kafka-user");
        assertThat(envValue(worker, "SPRING_KAFKA_PROPERTIES_SASL_JAAS_CONFIG"))
                .isEqualTo("org.apache.kafka.common.security.scram.ScramLoginModule required "
                        + "username=\"$(KAFKA_SASL_USERNAME)\" password=\"$(KAFKA_SASL_PASSWORD)\";");
        assertThat(envValue(worker, "SPRING_KAFKA_SSL_TRUST_STORE_LOCATION")).isEqualTo("file:/etc/mstar/kafka-tls/ca.crt");
        assertThat(pod.getVolumes()).anySatisfy(v -> assertThat(v.getSecret() == null ? null : v.getSecret().getSecretName())
                .isEqualTo("kafka-ca"));
        assertThat(envValue(worker, "MSTAR_MESSAGING_REPLICATION_FACTOR")).isEqualTo("3");
        // The KAFKA_SASL_* variables must precede the one that expands them, or the kubelet leaves $(...) as is.
        List<String> names = worker.getEnv().stream().map(EnvVar::getName).toList();
        assertThat(names.indexOf("KAFKA_SASL_PASSWORD")).isLessThan(names.indexOf("SPRING_KAFKA_PROPERTIES_SASL_JAAS_CONFIG"));
    }

    @Test
    void aMisspelledFieldInARenderedObjectIsCaught() {
        // worker.env is passed through verbatim, so it can carry a typo into the pod spec.
        Chart.Rendered rendered = chart.render(List.of(), Map.of("worker.env[0].name", "EXTRA", "worker.env[0].valeu", "x"));
        StatefulSet workers = rendered.one(StatefulSet.class, Chart.name("worker"));

        assertThat(UnknownFields.in(workers)).singleElement().asString().contains("env[").contains("[valeu]");
    }
}
