package io.mstar.helm;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecretVolumeSource;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.mstar.controlplane.DataPlaneSecurityProperties;
import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.testing.TestCertificates;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static io.mstar.helm.Chart.Rendered.onlyContainer;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * TLS on the data port (dataPlane.tls.*, docs/security.md#tls-on-the-data-port): one {@code kubernetes.io/tls} Secret,
 * the user's or cert-manager's, mounted into the conductor and every worker, and the services pointed at its keys;
 * nothing at all when it is off.
 */
class DataPlaneTlsTests {

    private static final String SECRET = "mstar-data-tls";
    private static final String MOUNT = "/etc/mstar/data-tls";
    private static final String VOLUME = "data-tls";
    private static final String SERVER_NAME = "mstar-data-plane";
    private static final String ENV_PREFIX = "MSTAR_DATA_PLANE_TLS_";
    private static final String POD_IP = "10.42.0.17";
    private static final Map<String, Object> ENABLED = Map.of("dataPlane.tls.enabled", true,
            "dataPlane.tls.secretName", SECRET);

    /** A self-signed deployment certificate, a CA and a leaf it signed, as PEM ({@link TestCertificates}). */
    @TempDir
    static Path certificates;
    private static String selfSignedCrt;
    private static String selfSignedKey;
    private static String caCrt;
    private static String leafChain;
    private static String leafKey;

    @AutoClose
    private final Chart chart = new Chart();
    @TempDir
    Path work;

    @BeforeAll
    static void makeCertificates() throws Exception {
        TestCertificates.Pem self = TestCertificates.selfSigned(certificates, "self", "dns:" + SERVER_NAME);
        selfSignedCrt = Files.readString(self.certificate(), StandardCharsets.US_ASCII);
        selfSignedKey = Files.readString(self.privateKey(), StandardCharsets.US_ASCII);
        TestCertificates.Pem ca = TestCertificates.authority(certificates, "ca");
        TestCertificates.Pem leaf = TestCertificates.signedBy(certificates, "ca", "leaf", "dns:" + SERVER_NAME);
        caCrt = Files.readString(ca.certificate(), StandardCharsets.US_ASCII);
        leafChain = Files.readString(leaf.certificate(), StandardCharsets.US_ASCII);
        leafKey = Files.readString(leaf.privateKey(), StandardCharsets.US_ASCII);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Off

    static Stream<Arguments> tlsOff() {
        return Stream.of(
                Arguments.of("default values", Map.of()),
                Arguments.of("a Secret named but TLS off", Map.of("dataPlane.tls.secretName", SECRET,
                        "dataPlane.tls.caKey", "ca.crt", "dataPlane.tls.serverName", SERVER_NAME)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tlsOff")
    void offRendersNothingTls(String label, Map<String, Object> sets) {
        Chart.Rendered rendered = chart.renderWith(sets);

        for (PodSpec pod : rendered.servicePods()) {
            Container c = onlyContainer(pod);
            assertThat(c.getEnv()).as(c.getName()).noneMatch(e -> e.getName().startsWith(ENV_PREFIX));
            assertThat(pod.getVolumes()).as(c.getName()).noneMatch(v -> v.getName().equals(VOLUME)
                    || (v.getSecret() != null && v.getSecret().getSecretName().equals(SECRET)));
            assertThat(c.getVolumeMounts()).as(c.getName()).noneMatch(m -> m.getName().equals(VOLUME)
                    || m.getMountPath().startsWith(MOUNT));
        }
        assertThat(rendered.yaml()).doesNotContain(ENV_PREFIX).doesNotContain(MOUNT).doesNotContain(SECRET);
    }

    @Test
    void offTheServicesBindPlainHttp() {
        for (PodSpec pod : chart.render().servicePods()) {
            DataPlaneSecurityProperties properties = properties(start(pod, Map.of()));

            assertThat(properties.tls().enabled()).isFalse();
            assertThat(properties.dataPlaneTls().enabled()).isFalse();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // On

    @Test
    void onBothWorkloadsMountTheSameSecretReadOnlyAndPointTheServicesAtItsKeys() {
        Chart.Rendered rendered = chart.renderWith(ENABLED);

        for (PodSpec pod : rendered.servicePods()) {
            Container c = onlyContainer(pod);
            assertMountsTheSecret(pod, List.of("tls.crt", "tls.key"));
            assertThat(envValue(c, "MSTAR_DATA_PLANE_TLS_ENABLED")).as(c.getName()).isEqualTo("true");
            assertThat(envValue(c, "MSTAR_DATA_PLANE_TLS_CERTIFICATE_FILE")).as(c.getName())
                    .isEqualTo(MOUNT + "/tls.crt");
            assertThat(envValue(c, "MSTAR_DATA_PLANE_TLS_PRIVATE_KEY_FILE")).as(c.getName())
                    .isEqualTo(MOUNT + "/tls.key");
            assertThat(env(c, "MSTAR_DATA_PLANE_TLS_TRUST_FILE")).as(c.getName()).isEmpty();
            assertThat(env(c, "MSTAR_DATA_PLANE_TLS_SERVER_NAME")).as(c.getName()).isEmpty();
            assertThat(c.getEnv()).as(c.getName()).filteredOn(e -> e.getName().startsWith(ENV_PREFIX)).hasSize(3);
            // Everything the services are pointed at is a key the volume projects.
            assertPointsAtMountedKeys(pod);
            // The data-plane secret is still mounted: TLS encrypts, grants still authenticate.
            assertThat(pod.getVolumes()).extracting(Volume::getName).contains("data-plane", VOLUME);
        }
        for (Object workload : List.of(rendered.one(Deployment.class, Chart.name("conductor")),
                rendered.one(StatefulSet.class, Chart.name("worker")))) {
            assertThat(UnknownFields.in(workload)).isEmpty();
        }
    }

    @Test
    void onWithoutGrantsTheSecretIsMountedAllTheSame() {
        Map<String, Object> sets = new HashMap<>(ENABLED);
        sets.put("dataPlane.authentication", "none");

        for (PodSpec pod : chart.renderWith(sets).servicePods()) {
            assertMountsTheSecret(pod, List.of("tls.crt", "tls.key"));
            assertThat(pod.getVolumes()).extracting(Volume::getName).doesNotContain("data-plane");
        }
    }

    /**
     * The key is mounted 0440, owned by root and the pod's fsGroup: the non-root container user reads it as a member
     * of that group, with no world-readable bit.
     */
    @Test
    void onTheContainerUserReadsTheKeyThroughThePodsFsGroup() {
        for (PodSpec pod : chart.renderWith(ENABLED).servicePods()) {
            PodSecurityContext security = pod.getSecurityContext();
            SecretVolumeSource source = volume(pod).getSecret();

            assertThat(security.getRunAsNonRoot()).isTrue();
            assertThat(security.getFsGroup()).as("fsGroup").isNotNull().isPositive();
            assertThat(security.getRunAsGroup()).as("the container's primary group").isEqualTo(security.getFsGroup());
            assertThat(source.getDefaultMode() & 0040).as("group-readable").isEqualTo(0040);
            assertThat(source.getDefaultMode() & 0007).as("not world-readable").isZero();
            assertThat(source.getItems()).allSatisfy(item -> assertThat(item.getMode()).isNull());
        }
    }

    static Stream<Arguments> optionalSettings() {
        return Stream.of(
                // caKey, serverName, the Secret's keys mounted, trust file, server name
                Arguments.of("", "", List.of("tls.crt", "tls.key"), null, null),
                Arguments.of("ca.crt", "", List.of("tls.crt", "tls.key", "ca.crt"), MOUNT + "/ca.crt", null),
                Arguments.of("", SERVER_NAME, List.of("tls.crt", "tls.key"), null, SERVER_NAME),
                Arguments.of("trust-bundle.pem", SERVER_NAME, List.of("tls.crt", "tls.key", "trust-bundle.pem"),
                        MOUNT + "/trust-bundle.pem", SERVER_NAME),
                // tls.crt named as the CA bundle: the same as none, and projected once.
                Arguments.of("tls.crt", "", List.of("tls.crt", "tls.key"), MOUNT + "/tls.crt", null));
    }

    @ParameterizedTest(name = "caKey={0} serverName={1}")
    @MethodSource("optionalSettings")
    void caKeyAndServerNameAppearOnlyWhenSet(String caKey, String serverName, List<String> keys, String trustFile,
            String name) {
        Map<String, Object> sets = new HashMap<>(ENABLED);
        if (!caKey.isEmpty()) {
            sets.put("dataPlane.tls.caKey", caKey);
        }
        if (!serverName.isEmpty()) {
            sets.put("dataPlane.tls.serverName", serverName);
        }

        for (PodSpec pod : chart.renderWith(sets).servicePods()) {
            Container c = onlyContainer(pod);
            assertMountsTheSecret(pod, keys);
            assertThat(env(c, "MSTAR_DATA_PLANE_TLS_TRUST_FILE").map(EnvVar::getValue).orElse(null)).as(c.getName())
                    .isEqualTo(trustFile);
            assertThat(env(c, "MSTAR_DATA_PLANE_TLS_SERVER_NAME").map(EnvVar::getValue).orElse(null)).as(c.getName())
                    .isEqualTo(name);
            assertPointsAtMountedKeys(pod);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The services' view: the rendered environment and the mounted Secret bound to DataPlaneSecurityProperties

    /**
     * The pods started as the kubelet would start them (the Secret's keys written at the mount path with the volume's
     * mode), their environment bound by Spring's relaxed binding to the services' own properties: both load the same
     * mounted certificate and key and verify the same name.
     */
    @Test
    void theServicesLoadTheMountedSelfSignedCertificateAndTrustItself() {
        Map<String, Object> sets = new HashMap<>(ENABLED);
        sets.put("dataPlane.tls.serverName", SERVER_NAME);
        Map<String, Map<String, String>> secrets = Map.of(SECRET, Map.of("tls.crt", selfSignedCrt,
                "tls.key", selfSignedKey));

        for (PodSpec pod : chart.renderWith(sets).servicePods()) {
            Map<String, String> env = start(pod, secrets);
            Path root = Path.of(env.get("ROOT"));
            DataPlaneTls tls = properties(env).dataPlaneTls();

            assertThat(tls.enabled()).isTrue();
            assertThat(tls.scheme()).isEqualTo("https");
            assertThat(tls.certificateFile()).contains(root.resolve("etc/mstar/data-tls/tls.crt"));
            assertThat(tls.privateKeyFile()).contains(root.resolve("etc/mstar/data-tls/tls.key"));
            assertThat(tls.trustFile()).as("self-signed: the certificate trusts itself").isEqualTo(tls.certificateFile());
            assertThat(tls.serverName()).contains(SERVER_NAME);
            assertThat(Files.isReadable(tls.privateKeyFile().orElseThrow())).isTrue();
        }
    }

    @Test
    void theServicesLoadTheMountedCaIssuedCertificateAndTrustTheCaKey() {
        Map<String, Object> sets = new HashMap<>(ENABLED);
        sets.put("dataPlane.tls.caKey", "ca.crt");
        sets.put("dataPlane.tls.serverName", SERVER_NAME);
        // As cert-manager writes it: the chain in tls.crt, the issuing CA in ca.crt.
        Map<String, Map<String, String>> secrets = Map.of(SECRET, Map.of("tls.crt", leafChain, "tls.key", leafKey,
                "ca.crt", caCrt));

        for (PodSpec pod : chart.renderWith(sets).servicePods()) {
            Map<String, String> env = start(pod, secrets);
            Path root = Path.of(env.get("ROOT"));
            DataPlaneTls tls = properties(env).dataPlaneTls();

            assertThat(tls.enabled()).isTrue();
            assertThat(tls.certificateFile()).contains(root.resolve("etc/mstar/data-tls/tls.crt"));
            assertThat(tls.privateKeyFile()).contains(root.resolve("etc/mstar/data-tls/tls.key"));
            assertThat(tls.trustFile()).contains(root.resolve("etc/mstar/data-tls/ca.crt"));
            assertThat(tls.serverName()).contains(SERVER_NAME);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What the chart refuses

    @Test
    void theSchemaRefusesTlsWithoutItsSecret() {
        String failure = chart.renderFailure(List.of(), Map.of("dataPlane.tls.enabled", true)).orElseThrow(
                () -> new AssertionError("dataPlane.tls.enabled without secretName rendered"));

        assertThat(failure).contains("values don't meet the specifications of the schema")
                .contains("at '/dataPlane/tls/secretName'").contains("minLength: got 0, want 1");
    }

    @Test
    void withoutTheSchemaTheTemplatesStillRefuseTlsWithoutItsSecret() {
        assertThat(chart.renderFailureWithoutSchema(work, Map.of("dataPlane.tls.enabled", true))).get().asString()
                .contains("dataPlane.tls.secretName is required when dataPlane.tls.enabled is true")
                .contains("kubernetes.io/tls Secret");
        assertThat(chart.renderFailureWithoutSchema(work, ENABLED)).isEmpty();
    }

    @Test
    void thePrivateKeyIsRefusedAsTheCaBundleWithOrWithoutTheSchema() {
        Map<String, Object> sets = new HashMap<>(ENABLED);
        sets.put("dataPlane.tls.caKey", "tls.key");
        String message = "dataPlane.tls.caKey names the CA bundle readers trust (e.g. ca.crt), not the private key tls.key";

        assertThat(chart.renderFailure(List.of(), sets)).get().asString().contains(message);
        assertThat(chart.renderFailureWithoutSchema(work, sets)).get().asString().contains(message);
    }

    static Stream<Arguments> schemaViolations() {
        return Stream.of(
                Arguments.of("server name an IP address", Map.of("dataPlane.tls.serverName", "10.42.0.17"),
                        "/dataPlane/tls/serverName"),
                Arguments.of("server name with a port", Map.of("dataPlane.tls.serverName", "mstar-data-plane:7301"),
                        "/dataPlane/tls/serverName"),
                Arguments.of("server name a wildcard", Map.of("dataPlane.tls.serverName", "*.mstar-worker.inference.svc"),
                        "/dataPlane/tls/serverName"),
                Arguments.of("server name too long", Map.of("dataPlane.tls.serverName", ("a".repeat(60) + ".").repeat(5)
                        + "svc"), "/dataPlane/tls/serverName"),
                Arguments.of("a CA key with a slash", Map.of("dataPlane.tls.caKey", "../ca.crt"),
                        "/dataPlane/tls/caKey"),
                Arguments.of("not a Secret name", Map.of("dataPlane.tls.secretName", "Data_TLS"),
                        "/dataPlane/tls/secretName"),
                Arguments.of("an unknown key", Map.of("dataPlane.tls.certificate", "tls.crt"), "/dataPlane/tls"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schemaViolations")
    void theSchemaRefuses(String rule, Map<String, Object> values, String pointer) {
        Map<String, Object> sets = new HashMap<>(ENABLED);
        sets.putAll(values);

        assertThat(chart.renderFailure(List.of(), sets)).as(rule).get().asString()
                .contains("values don't meet the specifications of the schema").contains("at '" + pointer + "'");
    }

    @Test
    void theSchemaAcceptsTheNamesACertificateCarries() {
        for (String name : List.of(SERVER_NAME, "mstar-data-plane.inference.svc",
                "mstar-data-plane.inference.svc.cluster.local", "data-plane.example.com")) {
            Map<String, Object> sets = new HashMap<>(ENABLED);
            sets.put("dataPlane.tls.serverName", name);
            assertThat(chart.renderFailure(List.of(), sets)).as(name).isEmpty();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Helpers

    private static Optional<EnvVar> env(Container container, String name) {
        List<EnvVar> found = container.getEnv().stream().filter(e -> e.getName().equals(name)).toList();
        assertThat(found).as("env %s of %s", name, container.getName()).hasSizeLessThan(2);
        found.forEach(e -> assertThat(e.getValueFrom()).as(name).isNull());
        return found.stream().findFirst();
    }

    private static String envValue(Container container, String name) {
        return env(container, name).orElseThrow(() -> new AssertionError("no env " + name)).getValue();
    }

    private static Volume volume(PodSpec pod) {
        return pod.getVolumes().stream().filter(v -> v.getName().equals(VOLUME)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + VOLUME + " volume"));
    }

    /** One read-only Secret volume, mode 0440, projecting exactly {@code keys} each under its own name. */
    private static void assertMountsTheSecret(PodSpec pod, List<String> keys) {
        Container c = onlyContainer(pod);
        SecretVolumeSource source = volume(pod).getSecret();
        assertThat(source).as(c.getName()).isNotNull();
        assertThat(source.getSecretName()).as(c.getName()).isEqualTo(SECRET);
        assertThat(source.getDefaultMode()).as(c.getName()).isEqualTo(0440);
        assertThat(source.getOptional()).as("a missing Secret keeps the pod from starting").isNotEqualTo(Boolean.TRUE);
        assertThat(source.getItems()).as(c.getName()).extracting(KeyToPath::getKey).containsExactlyElementsOf(keys);
        assertThat(source.getItems()).as(c.getName()).allSatisfy(item -> assertThat(item.getPath()).isEqualTo(item.getKey()));
        assertThat(c.getVolumeMounts()).as(c.getName()).filteredOn(m -> m.getName().equals(VOLUME))
                .singleElement().satisfies(m -> {
                    assertThat(m.getMountPath()).isEqualTo(MOUNT);
                    assertThat(m.getReadOnly()).isTrue();
                    assertThat(m.getSubPath()).isNull();
                });
        assertThat(c.getVolumeMounts()).as(c.getName()).filteredOn(m -> m.getMountPath().startsWith(MOUNT)).hasSize(1);
    }

    /** Every TLS file the services are told to read is one the data-tls volume projects at its mount. */
    private static void assertPointsAtMountedKeys(PodSpec pod) {
        Container c = onlyContainer(pod);
        List<String> mounted = volume(pod).getSecret().getItems().stream().map(i -> MOUNT + "/" + i.getPath()).toList();
        assertThat(c.getEnv()).filteredOn(e -> e.getName().startsWith(ENV_PREFIX) && e.getName().endsWith("_FILE"))
                .isNotEmpty().allSatisfy(e -> assertThat(mounted).as(e.getName()).contains(e.getValue()));
    }

    private static DataPlaneSecurityProperties properties(Map<String, String> env) {
        return new Binder(ConfigurationPropertySources.from(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new LinkedHashMap<>(env))))
                .bindOrCreate("mstar.data-plane", DataPlaneSecurityProperties.class);
    }

    /**
     * The container's environment as the kubelet builds it, with the Secret volumes of {@code secrets} (Secret name to
     * its data) written under a fresh root with the volume's mode, and the {@code *_FILE} paths that point into them
     * rewritten to that root. {@code ROOT} holds the root.
     */
    private Map<String, String> start(PodSpec pod, Map<String, Map<String, String>> secrets) {
        Container container = onlyContainer(pod);
        Path root;
        try {
            root = Files.createTempDirectory(work, container.getName() + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (VolumeMount mount : container.getVolumeMounts()) {
            Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
                    .orElseThrow(() -> new AssertionError("volumeMount " + mount.getName() + " has no volume"));
            SecretVolumeSource source = volume.getSecret();
            if (source == null || !secrets.containsKey(source.getSecretName())) {
                continue;
            }
            Map<String, String> data = secrets.get(source.getSecretName());
            for (KeyToPath item : source.getItems()) {
                if (!data.containsKey(item.getKey())) {
                    throw new AssertionError("Secret " + source.getSecretName() + " has no key " + item.getKey()
                            + ": the pod would not start (ContainerCreating)");
                }
                write(root.resolve(mount.getMountPath().substring(1)).resolve(item.getPath()), data.get(item.getKey()),
                        source.getDefaultMode());
            }
        }
        Map<String, String> env = new LinkedHashMap<>();
        for (EnvVar var : container.getEnv()) {
            if (var.getValueFrom() == null) {
                String value = var.getValue();
                if (var.getName().endsWith("_FILE") && value != null && value.startsWith(MOUNT + "/")) {
                    value = root.resolve(value.substring(1)).toString();
                }
                env.put(var.getName(), value);
            } else if (var.getValueFrom().getFieldRef() != null
                    && var.getValueFrom().getFieldRef().getFieldPath().equals("status.podIP")) {
                env.put(var.getName(), POD_IP);
            }
        }
        env.put("ROOT", root.toString());
        return env;
    }

    /** {@code content} at {@code file} with the permission bits of {@code mode} the test's own user can use (owner). */
    private static void write(Path file, String content, Integer mode) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, content, StandardCharsets.US_ASCII);
            int bits = mode == null ? 0644 : mode;
            Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
            PosixFilePermission[] order = {PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
                    PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.GROUP_READ, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
                    PosixFilePermission.OWNER_READ};
            for (int i = 0; i < order.length; i++) {
                if ((bits & (1 << i)) != 0) {
                    permissions.add(order[i]);
                }
            }
            Files.setPosixFilePermissions(file, permissions);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
