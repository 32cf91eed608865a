package io.mstar.helm;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.mstar.controlplane.DataPlaneSecurityProperties;
import io.mstar.controlplane.DataPlaneSecurityProperties.Authentication;
import io.mstar.tensor.transport.ReadGrants;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.mstar.helm.Chart.Rendered.onlyContainer;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The data-plane secret (docs/security.md): one Secret, generated once and kept, given, or the user's own, mounted
 * into the conductor and every worker, and the services pointed at it; tensor servers bound to the pod IP.
 */
class DataPlaneSecretTests {

    private static final String SECRET_NAME = Chart.name("data-plane");
    private static final String MOUNT = "/etc/mstar/data-plane";
    private static final String POD_IP = "10.42.0.17";

    @AutoClose
    private final Chart chart = new Chart();
    @TempDir
    Path work;

    // ---------------------------------------------------------------------------------------------------------------
    // The Secret

    private static String secret(Chart.Rendered rendered) {
        Secret secret = rendered.one(Secret.class, SECRET_NAME);
        assertThat(secret.getData()).containsOnlyKeys("secret");
        return new String(Base64.getDecoder().decode(secret.getData().get("secret")), StandardCharsets.UTF_8);
    }

    @Test
    void firstInstallGeneratesA48CharacterRandomSecretThatDiffersPerInstall() {
        Chart.Rendered rendered = chart.render();
        String first = secret(rendered);
        String second = secret(chart.render());

        assertThat(first).hasSize(48).matches("[A-Za-z0-9]+");
        assertThat(second).hasSize(48).isNotEqualTo(first);
        assertThat(secret(rendered)).as("not the admin token").isNotEqualTo(new String(Base64.getDecoder().decode(
                rendered.one(Secret.class, Chart.name("admin-token")).getData().get("token")), StandardCharsets.UTF_8));
    }

    @Test
    void upgradeKeepsTheSecretAlreadyInTheClusterARotatedOneToo() {
        chart.api().putSecret(Chart.NAMESPACE, SECRET_NAME, "secret", "rotated-by-the-operator-0123456789abcdef");

        assertThat(secret(chart.render())).isEqualTo("rotated-by-the-operator-0123456789abcdef");
        assertThat(secret(chart.render())).isEqualTo("rotated-by-the-operator-0123456789abcdef");
    }

    @Test
    void anExplicitValueWinsOverGenerationAndOverTheClustersSecret() {
        String given = "an-operator-chosen-data-plane-secret-0123456789";
        chart.api().putSecret(Chart.NAMESPACE, SECRET_NAME, "secret", "rotated-by-the-operator-0123456789abcdef");

        assertThat(secret(chart.renderWith(Map.of("dataPlane.value", given)))).isEqualTo(given);
    }

    @Test
    void anExistingSecretIsMountedByNameInBothWorkloadsAndNoDataPlaneSecretIsRendered() {
        Chart.Rendered rendered = chart.renderWith(Map.of("dataPlane.existingSecret", "ops-data-plane",
                "dataPlane.secretKey", "hmac"));

        assertThat(rendered.all(Secret.class)).extracting(s -> s.getMetadata().getName())
                .containsExactly(Chart.name("admin-token"));
        for (PodSpec pod : rendered.servicePods()) {
            assertMountsTheSecret(pod, "ops-data-plane", "hmac");
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The workloads

    @Test
    void bothWorkloadsMountTheRenderedSecretReadOnlyAndPointTheServicesAtItsKey() {
        Chart.Rendered rendered = chart.render();
        Secret secret = rendered.one(Secret.class, SECRET_NAME);

        for (PodSpec pod : rendered.servicePods()) {
            assertMountsTheSecret(pod, secret.getMetadata().getName(), "secret");
            assertThat(secret.getData()).containsKey(volume(pod).getSecret().getItems().get(0).getKey());
        }
    }

    @Test
    void authenticationNoneMountsNothingRendersNoSecretAndTellsTheServices() {
        Chart.Rendered rendered = chart.renderWith(Map.of("dataPlane.authentication", "none"));

        assertThat(rendered.find(Secret.class, SECRET_NAME)).isEmpty();
        for (PodSpec pod : rendered.servicePods()) {
            Container c = onlyContainer(pod);
            assertThat(envValue(c, "MSTAR_DATA_PLANE_AUTHENTICATION")).as(c.getName()).isEqualTo("none");
            assertThat(env(c, "MSTAR_DATA_PLANE_SECRET_FILE")).as(c.getName()).isEmpty();
            assertThat(pod.getVolumes()).as(c.getName()).noneMatch(v -> v.getName().equals("data-plane")
                    || (v.getSecret() != null && v.getSecret().getSecretName().equals(SECRET_NAME)));
            assertThat(c.getVolumeMounts()).as(c.getName()).noneMatch(m -> m.getMountPath().startsWith(MOUNT));
        }
    }

    @Test
    void bothWorkloadsBindTheirTensorServerToThePodIpAndAreProbedOnTheHttpPort() {
        Chart.Rendered rendered = chart.render();
        Container conductor = onlyContainer(rendered.servicePods().get(0));
        Container worker = onlyContainer(rendered.servicePods().get(1));

        assertThat(fieldRef(conductor, "MSTAR_CONDUCTOR_DATA_BIND_ADDRESS")).isEqualTo("status.podIP");
        assertThat(fieldRef(conductor, "MSTAR_CONDUCTOR_DATA_ADVERTISED_HOST")).isEqualTo("status.podIP");
        assertThat(fieldRef(worker, "MSTAR_WORKER_DATA_BIND_ADDRESS")).isEqualTo("status.podIP");
        // The headless Service's per-pod name resolves to that same pod IP.
        assertThat(envValue(worker, "MSTAR_WORKER_DATA_ADVERTISED_HOST")).isEqualTo("$(MSTAR_POD_NAME).mstar-worker.inference.svc");
        for (Container c : List.of(conductor, worker)) {
            assertThat(env(c, "MSTAR_WORKER_DATA_BIND_ADDRESS").isPresent()).as(c.getName()).isEqualTo(c == worker);
            assertThat(env(c, "MSTAR_CONDUCTOR_DATA_BIND_ADDRESS").isPresent()).as(c.getName()).isEqualTo(c == conductor);
            // A probe on the data port would meet a server that no longer listens on loopback and asks for grants.
            for (Probe probe : List.of(c.getStartupProbe(), c.getLivenessProbe(), c.getReadinessProbe())) {
                assertThat(probe.getHttpGet().getPort().getStrVal()).as(c.getName()).isEqualTo("http");
                assertThat(probe.getTcpSocket()).as(c.getName()).isNull();
            }
        }
    }

    /**
     * The pods started as the kubelet would start them (the Secret's key written at the mount path, {@code status.podIP}
     * resolved), their environment bound by Spring's relaxed binding to the services' own properties: both find the
     * same secret, a grant a worker mints passes the conductor's check, and the tensor servers bind the pod IP.
     */
    @Test
    void theServicesBindTheRenderedSettingsAndAcceptEachOthersGrants() {
        Chart.Rendered rendered = chart.render();
        Map<String, String> secrets = Map.of(SECRET_NAME, secret(rendered));
        Map<String, String> conductorEnv = start("conductor", rendered.one(Deployment.class, Chart.name("conductor"))
                .getSpec().getTemplate().getSpec(), secrets);
        Map<String, String> workerEnv = start("worker", rendered.one(StatefulSet.class, Chart.name("worker"))
                .getSpec().getTemplate().getSpec(), secrets);

        DataPlaneSecurityProperties conductor = binder(conductorEnv).bindOrCreate("mstar.data-plane",
                DataPlaneSecurityProperties.class);
        DataPlaneSecurityProperties worker = binder(workerEnv).bindOrCreate("mstar.data-plane",
                DataPlaneSecurityProperties.class);
        assertThat(conductor.authentication()).isEqualTo(Authentication.GRANTS);
        assertThat(worker.secretFile()).isNotBlank();
        ReadGrants conductorGrants = conductor.readGrants();
        ReadGrants workerGrants = worker.readGrants();
        assertThat(conductorGrants.enabled()).isTrue();
        assertThat(conductorGrants.check(workerGrants.issue(42L, "worker-1"), 42L)).isNull();
        assertThat(workerGrants.check(conductorGrants.issue(7L, "conductor"), 7L)).isNull();
        // Another install's secret signs grants this deployment refuses.
        Map<String, String> otherEnv = start("other", rendered.one(StatefulSet.class, Chart.name("worker")).getSpec()
                .getTemplate().getSpec(), Map.of(SECRET_NAME, secret(chart.render())));
        ReadGrants other = binder(otherEnv).bindOrCreate("mstar.data-plane", DataPlaneSecurityProperties.class).readGrants();
        assertThat(conductorGrants.check(other.issue(42L, "worker-1"), 42L)).isNotNull();

        assertThat(binder(conductorEnv).bind("mstar.conductor.data.bind-address", String.class).get()).isEqualTo(POD_IP);
        assertThat(binder(workerEnv).bind("mstar.worker.data.bind-address", String.class).get()).isEqualTo(POD_IP);
    }

    @Test
    void authenticationNoneBindsToServicesThatCheckNothing() {
        Chart.Rendered rendered = chart.renderWith(Map.of("dataPlane.authentication", "none"));
        for (PodSpec pod : rendered.servicePods()) {
            DataPlaneSecurityProperties properties = binder(start(onlyContainer(pod).getName(), pod, Map.of()))
                    .bindOrCreate("mstar.data-plane", DataPlaneSecurityProperties.class);

            assertThat(properties.authentication()).isEqualTo(Authentication.NONE);
            assertThat(properties.readGrants().enabled()).isFalse();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What the chart refuses without its schema (the schema's own rules: ValuesSchemaTests)

    @Test
    void withoutTheSchemaTheTemplatesStillRefuseAShortSecretAndAnUnknownMode() {
        assertThat(chart.renderFailureWithoutSchema(work, Map.of("dataPlane.value", "x".repeat(31))))
                .get().asString().contains("dataPlane.value must be at least 32 bytes");
        assertThat(chart.renderFailureWithoutSchema(work, Map.of("dataPlane.authentication", "hmac")))
                .get().asString().contains("dataPlane.authentication must be grants or none, not hmac");
        assertThat(chart.renderFailureWithoutSchema(work, Map.of("dataPlane.value", "x".repeat(32)))).isEmpty();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Helpers

    private static Optional<EnvVar> env(Container container, String name) {
        List<EnvVar> found = container.getEnv().stream().filter(e -> e.getName().equals(name)).toList();
        assertThat(found).as("env %s of %s", name, container.getName()).hasSizeLessThan(2);
        return found.stream().findFirst();
    }

    private static String envValue(Container container, String name) {
        return env(container, name).orElseThrow(() -> new AssertionError("no env " + name)).getValue();
    }

    private static String fieldRef(Container container, String name) {
        EnvVar var = env(container, name).orElseThrow(() -> new AssertionError("no env " + name));
        assertThat(var.getValue()).as(name).isNull();
        return var.getValueFrom().getFieldRef().getFieldPath();
    }

    private static Volume volume(PodSpec pod) {
        return pod.getVolumes().stream().filter(v -> v.getName().equals("data-plane")).findFirst()
                .orElseThrow(() -> new AssertionError("no data-plane volume"));
    }

    /** One read-only Secret volume with the one key, mounted where the services are told to read it. */
    private static void assertMountsTheSecret(PodSpec pod, String secretName, String key) {
        Container c = onlyContainer(pod);
        Volume volume = volume(pod);
        assertThat(volume.getSecret().getSecretName()).as(c.getName()).isEqualTo(secretName);
        assertThat(volume.getSecret().getDefaultMode()).as(c.getName()).isEqualTo(0440);
        assertThat(volume.getSecret().getItems()).as(c.getName()).singleElement().satisfies(item -> {
            assertThat(item.getKey()).isEqualTo(key);
            assertThat(item.getPath()).isEqualTo(key);
        });
        assertThat(c.getVolumeMounts()).as(c.getName()).filteredOn(m -> m.getName().equals("data-plane"))
                .singleElement().satisfies(m -> {
                    assertThat(m.getMountPath()).isEqualTo(MOUNT);
                    assertThat(m.getReadOnly()).isTrue();
                    assertThat(m.getSubPath()).isNull();
                });
        assertThat(envValue(c, "MSTAR_DATA_PLANE_AUTHENTICATION")).as(c.getName()).isEqualTo("grants");
        assertThat(envValue(c, "MSTAR_DATA_PLANE_SECRET_FILE")).as(c.getName()).isEqualTo(MOUNT + "/" + key);
    }

    /**
     * The container's environment as the kubelet builds it, with the Secret volumes of {@code secrets} (name to the
     * value of its one key) written under a fresh root and the secret file's path rewritten to that root.
     */
    private Map<String, String> start(String name, PodSpec pod, Map<String, String> secrets) {
        Container container = onlyContainer(pod);
        Path root;
        try {
            root = Files.createTempDirectory(work, name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (VolumeMount mount : container.getVolumeMounts()) {
            Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
                    .orElseThrow(() -> new AssertionError("volumeMount " + mount.getName() + " has no volume"));
            if (volume.getSecret() == null || !secrets.containsKey(volume.getSecret().getSecretName())) {
                continue;
            }
            volume.getSecret().getItems().forEach(item -> write(root.resolve(mount.getMountPath().substring(1))
                    .resolve(item.getPath()), secrets.get(volume.getSecret().getSecretName())));
        }
        Map<String, String> env = new LinkedHashMap<>();
        for (EnvVar var : container.getEnv()) {
            if (var.getValueFrom() == null) {
                env.put(var.getName(), var.getValue());
            } else if (var.getValueFrom().getFieldRef() != null
                    && var.getValueFrom().getFieldRef().getFieldPath().equals("status.podIP")) {
                env.put(var.getName(), POD_IP);
            }
        }
        env.computeIfPresent("MSTAR_DATA_PLANE_SECRET_FILE", (k, path) -> root.resolve(path.substring(1)).toString());
        return env;
    }

    /** Spring's view of a process environment: relaxed binding maps MSTAR_DATA_PLANE_SECRET_FILE to its property. */
    private static Binder binder(Map<String, String> env) {
        return new Binder(ConfigurationPropertySources.from(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new LinkedHashMap<>(env))));
    }

    private static void write(Path file, String content) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

}
