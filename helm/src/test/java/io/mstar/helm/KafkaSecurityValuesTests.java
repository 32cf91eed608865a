package io.mstar.helm;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecretVolumeSource;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.mstar.messaging.ControlClientSettings;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Topics;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.kafka.core.KafkaAdmin;

import javax.security.auth.login.AppConfigurationEntry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The external-Kafka security values ({@code kafka.external.securityProtocol}, {@code .tls.*}, {@code .sasl.*}) become
 * Kafka client settings that work in the services. For each protocol the chart is rendered, the conductor's and a
 * worker's container is "started" the way the kubelet starts it (Secret volumes written out, {@code valueFrom}
 * resolved from test Secrets, {@code $(VAR)} expanded in order), the resulting environment is handed to Boot's Kafka
 * auto-configuration over the service's own {@code application.yaml}, exactly as the process would see it, and the
 * producer, consumer and admin configs the services build from {@link KafkaProperties} are checked by Kafka itself:
 * parsed as {@link ProducerConfig}/{@link ConsumerConfig}/{@link AdminClientConfig}, the JAAS line parsed by
 * {@link JaasContext}, and the client's channel built (SASL login done, trust store loaded) with no broker needed.
 */
class KafkaSecurityValuesTests {

    private static final String USER_SECRET = "mstar-kafka-user";
    private static final String CA_SECRET = "kafka-ca";
    private static final String USERNAME = "mstar-prod";
    /** Base64 noise as SCRAM tooling generates it, plus a space, a colon, a semicolon and a dollar sign. */
    private static final String PASSWORD = "q9Z/u+2w= x:y;z$1";
    private static final List<String> BOOTSTRAP = List.of("kafka-0.kafka.infra.svc:9093", "kafka-1.kafka.infra.svc:9093",
            "kafka-2.kafka.infra.svc:9093");
    private static final String PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    private static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";

    @TempDir
    static Path caDir;
    private static String caPem;
    private static X509Certificate caCertificate;

    @AutoClose
    private final Chart chart = new Chart();
    @TempDir
    Path work;

    /** A CA certificate for the trust store (no broker ever presents a certificate here, so its key is thrown away). */
    @BeforeAll
    static void makeACaCertificate() throws Exception {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Path store = caDir.resolve("ca.p12");
        run(List.of(keytool.toString(), "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=mstar test CA", "-ext", "bc:c", "-validity", "3650", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", "changeit"));
        caPem = run(List.of(keytool.toString(), "-exportcert", "-rfc", "-alias", "ca", "-keystore", store.toString(),
                "-storepass", "changeit"));
        caCertificate = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII)));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What the services get

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SCRAM-SHA-512", "SCRAM-SHA-256"})
    void saslSslWithScramGivesEveryClientTheScramLoginWithTheSecretsCredentialsAndTrustsTheMountedCa(String mechanism) {
        // The CI values: SASL_SSL, caSecret kafka-ca (key ca.crt), sasl.existingSecret mstar-kafka-user.
        Chart.Rendered rendered = chart.render(List.of(chart.ciValues("external-kafka-values.yaml")),
                Map.of("kafka.external.sasl.mechanism", mechanism));
        Kubelet kubelet = kubelet(Map.of(USER_SECRET, Map.of("username", USERNAME, "password", PASSWORD),
                CA_SECRET, Map.of("ca.crt", caPem)));

        for (Service service : Service.values()) {
            Clients clients = service.start(rendered, kubelet);
            clients.each((client, config) -> {
                assertThat(config.getString("security.protocol")).as(client).isEqualTo("SASL_SSL");
                assertThat(config.getString("sasl.mechanism")).as(client).isEqualTo(mechanism);
                assertJaasLogin(config, client, SCRAM_MODULE);
                assertTrustsTheMountedCa(config, client, "/etc/mstar/kafka-tls/ca.crt");
                kubelet.assertKafkaChannelBuilds(config, client);
            });
        }
    }

    @Test
    void saslPlaintextWithPlainGivesEveryClientThePlainLoginWithTheSecretsCredentialsAndNoTls() {
        Chart.Rendered rendered = chart.render(values("""
                kafka:
                  mode: external
                  external:
                    bootstrapServers: kafka-0.kafka.infra.svc:9093,kafka-1.kafka.infra.svc:9093,kafka-2.kafka.infra.svc:9093
                    securityProtocol: SASL_PLAINTEXT
                    sasl:
                      mechanism: PLAIN
                      existingSecret: mstar-kafka-user
                      usernameKey: user
                      passwordKey: secret
                """));
        Kubelet kubelet = kubelet(Map.of(USER_SECRET, Map.of("user", USERNAME, "secret", PASSWORD)));

        for (Service service : Service.values()) {
            Clients clients = service.start(rendered, kubelet);
            assertThat(clients.pod().getVolumes()).extracting(Volume::getName).doesNotContain("kafka-tls");
            clients.each((client, config) -> {
                assertThat(config.getString("security.protocol")).as(client).isEqualTo("SASL_PLAINTEXT");
                assertThat(config.getString("sasl.mechanism")).as(client).isEqualTo("PLAIN");
                assertJaasLogin(config, client, PLAIN_MODULE);
                assertThat(config.originals()).as(client).doesNotContainKeys("ssl.truststore.location", "ssl.truststore.type");
                kubelet.assertKafkaChannelBuilds(config, client);
            });
        }
    }

    @Test
    void sslWithACaSecretTrustsTheMountedPemBundleAndSendsNoSaslSettings() {
        Chart.Rendered rendered = chart.render(values("""
                kafka:
                  mode: external
                  external:
                    bootstrapServers: kafka-0.kafka.infra.svc:9093,kafka-1.kafka.infra.svc:9093,kafka-2.kafka.infra.svc:9093
                    securityProtocol: SSL
                    tls:
                      caSecret: kafka-ca
                      caKey: ca-bundle.pem
                """));
        Kubelet kubelet = kubelet(Map.of(CA_SECRET, Map.of("ca-bundle.pem", caPem)));

        for (Service service : Service.values()) {
            Clients clients = service.start(rendered, kubelet);
            assertThat(clients.env()).doesNotContainKeys("KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD");
            clients.each((client, config) -> {
                assertThat(config.getString("security.protocol")).as(client).isEqualTo("SSL");
                assertThat(config.originals()).as(client).doesNotContainKeys("sasl.mechanism", "sasl.jaas.config");
                assertTrustsTheMountedCa(config, client, "/etc/mstar/kafka-tls/ca-bundle.pem");
                kubelet.assertKafkaChannelBuilds(config, client);
            });
        }
    }

    @Test
    void sslWithoutACaSecretKeepsTheJvmTrustStoreAndMountsNothing() {
        Chart.Rendered rendered = chart.render(values("""
                kafka:
                  mode: external
                  external:
                    bootstrapServers: kafka-0.kafka.infra.svc:9093,kafka-1.kafka.infra.svc:9093,kafka-2.kafka.infra.svc:9093
                    securityProtocol: SSL
                """));
        Kubelet kubelet = kubelet(Map.of());

        for (Service service : Service.values()) {
            Clients clients = service.start(rendered, kubelet);
            assertThat(clients.pod().getVolumes()).extracting(Volume::getName).doesNotContain("kafka-tls");
            clients.each((client, config) -> {
                assertThat(config.getString("security.protocol")).as(client).isEqualTo("SSL");
                assertThat(config.originals()).as(client).doesNotContainKeys("ssl.truststore.location",
                        "ssl.truststore.type", "sasl.jaas.config");
                kubelet.assertKafkaChannelBuilds(config, client);
            });
        }
    }

    /**
     * The JAAS line quotes the password as {@code password="..."}: Kafka's parser reads a backslash in it as an escape
     * and a double quote as the end of the value, and Spring resolves {@code ${...}} in the variable as a placeholder,
     * so such a password does not arrive intact (helm/README.md says so).
     */
    @Test
    void aPasswordWithABackslashADoubleQuoteOrAPlaceholderDoesNotSurviveTheJaasLine() {
        Chart.Rendered rendered = chart.render(chart.ciValues("external-kafka-values.yaml"));

        // In the Secret -> what the login module gets: backslash-b is read as a backspace and backslash-c as a plain c;
        // ${b:c} resolves to its default.
        Map<String, String> mangled = Map.of("a\\b\\c", "a\bc", "a${b:c}d", "acd");
        mangled.forEach((password, received) -> {
            Clients clients = Service.CONDUCTOR.start(rendered, kubelet(Map.of(
                    USER_SECRET, Map.of("username", USERNAME, "password", password), CA_SECRET, Map.of("ca.crt", caPem))));
            assertThat(jaasOptions(clients.producer()).get("password")).as(password).isEqualTo(received);
        });
        Clients quoted = Service.CONDUCTOR.start(rendered, kubelet(Map.of(
                USER_SECRET, Map.of("username", USERNAME, "password", "a\"b"), CA_SECRET, Map.of("ca.crt", caPem))));
        assertThatThrownBy(() -> jaasOptions(quoted.producer())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("in JAAS config");
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What the chart refuses

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SASL_PLAINTEXT", "SASL_SSL"})
    void aSaslProtocolWithoutASaslSecretIsRefusedByTheSchemaAndWithoutTheSchemaByTheTemplate(String protocol) {
        Path values = values("""
                kafka:
                  mode: external
                  external:
                    bootstrapServers: kafka-0.kafka.infra.svc:9093
                    securityProtocol: %s
                """.formatted(protocol));

        assertThat(chart.renderFailure(List.of(values), Map.of())).get().asString()
                .contains("values don't meet the specifications of the schema")
                .contains("at '/kafka/external/sasl/existingSecret'");
        // helm install --skip-schema-validation still meets the template's own guard.
        assertThat(chart.renderFailureWithoutSchema(work, Map.of(), values)).get().asString()
                .contains("kafka.external.sasl.existingSecret is required with a SASL_* securityProtocol");
    }

    @Test
    void externalKafkaWithoutBootstrapServersIsRefusedWithoutTheSchemaToo() {
        Path values = values("""
                kafka:
                  mode: external
                  external:
                    securityProtocol: SSL
                """);

        assertThat(chart.renderFailureWithoutSchema(work, Map.of(), values)).get().asString()
                .contains("kafka.external.bootstrapServers is required when kafka.mode is external");
    }

    /** The template builds a JAAS line for PLAIN and SCRAM only; anything else would get a SCRAM login. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"GSSAPI", "OAUTHBEARER", "scram-sha-512"})
    void aSaslMechanismTheChartCannotLogInWithIsRefusedByTheSchema(String mechanism) {
        Optional<String> failure = chart.renderFailure(List.of(chart.ciValues("external-kafka-values.yaml")),
                Map.of("kafka.external.sasl.mechanism", mechanism));

        assertThat(failure).get().asString().contains("at '/kafka/external/sasl/mechanism'").contains("value must be one of");
    }

    @Test
    void aSecurityProtocolKafkaDoesNotKnowIsRefusedByTheSchema() {
        Optional<String> failure = chart.renderFailure(List.of(chart.ciValues("external-kafka-values.yaml")),
                Map.of("kafka.external.securityProtocol", "TLS"));

        assertThat(failure).get().asString().contains("at '/kafka/external/securityProtocol'").contains("value must be one of");
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Checks

    private static void assertJaasLogin(AbstractConfig config, String client, String module) {
        JaasContext jaas = JaasContext.loadClientContext(config.values());
        assertThat(jaas.configurationEntries()).as(client).singleElement().satisfies(entry -> {
            assertThat(entry.getLoginModuleName()).isEqualTo(module);
            assertThat(entry.getControlFlag()).isEqualTo(AppConfigurationEntry.LoginModuleControlFlag.REQUIRED);
            assertThat(Map.<String, Object>copyOf(entry.getOptions()))
                    .isEqualTo(Map.of("username", USERNAME, "password", PASSWORD));
        });
    }

    /** The JAAS options Kafka parses out of a producer's {@code sasl.jaas.config}. */
    private static Map<String, ?> jaasOptions(Map<String, Object> producer) {
        return JaasContext.loadClientContext(new ProducerConfig(producer).values()).configurationEntries().get(0).getOptions();
    }

    /** A PEM trust store at the mounted Secret key; Kafka refuses a password on a PEM trust store, so there is none. */
    private static void assertTrustsTheMountedCa(AbstractConfig config, String client, String path) {
        assertThat(config.getString("ssl.truststore.type")).as(client).isEqualTo("PEM");
        assertThat(config.getString("ssl.truststore.location")).as(client).isEqualTo(path);
        assertThat(config.getPassword("ssl.truststore.password")).as(client).isNull();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Rendering

    private Path values(String yaml) {
        try {
            Path file = Files.createTempFile(work, "values-", ".yaml");
            return Files.writeString(file, yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Kubelet kubelet(Map<String, Map<String, String>> secrets) {
        try {
            return new Kubelet(Files.createTempDirectory(work, "node-"), secrets);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
        }
        return output;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The services

    /** A service's pod as the chart renders it, with the pod metadata the downward API would give it. */
    private enum Service {
        CONDUCTOR("conductor-service", EntityId.CONDUCTOR, "mstar-conductor-6c9f7d8b5-x2q4z", Map.of()) {
            @Override
            PodSpec pod(Chart.Rendered rendered) {
                return rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec();
            }
        },
        WORKER("worker-service", EntityId.worker(1), "mstar-worker-1", Map.of("apps.kubernetes.io/pod-index", "1")) {
            @Override
            PodSpec pod(Chart.Rendered rendered) {
                return rendered.one(StatefulSet.class, Chart.name("worker")).getSpec().getTemplate().getSpec();
            }
        };

        private final String module;
        private final EntityId self;
        private final String podName;
        private final Map<String, String> podLabels;

        Service(String module, EntityId self, String podName, Map<String, String> podLabels) {
            this.module = module;
            this.self = self;
            this.podName = podName;
            this.podLabels = podLabels;
        }

        abstract PodSpec pod(Chart.Rendered rendered);

        /**
         * Starts the service's container on {@code kubelet} and builds its Kafka clients' configs the way the services
         * do: Boot's auto-configuration binds {@link KafkaProperties} from the process environment over the service's
         * application.yaml; ControlPlaneConfiguration and ControlInboxes apply {@link ControlClientSettings} to
         * {@code buildProducerProperties()} and {@code buildConsumerProperties()}; topics and the conductor's health
         * probe use the auto-configured {@link KafkaAdmin}'s properties.
         */
        Clients start(Chart.Rendered rendered, Kubelet kubelet) {
            PodSpec pod = pod(rendered);
            assertThat(pod.getContainers()).hasSize(1);
            Container container = pod.getContainers().get(0);
            kubelet.mount(pod, container);
            Map<String, String> env = kubelet.environment(this, container);
            Path applicationYaml = Path.of(System.getProperty("mstar.repo.root", ".."))
                    .resolve(module).resolve("src/main/resources/application.yaml");

            Map<String, Object> producer = new HashMap<>();
            Map<String, Object> consumer = new HashMap<>();
            Map<String, Object> admin = new HashMap<>();
            new ApplicationContextRunner()
                    .withInitializer(context -> processEnvironment(context.getEnvironment(), env, applicationYaml))
                    .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class))
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        KafkaProperties kafka = context.getBean(KafkaProperties.class);
                        Topics topics = new Topics(env.get("MSTAR_MESSAGING_TOPIC_PREFIX"));
                        producer.putAll(ControlClientSettings.producer(kafka.buildProducerProperties(), self));
                        consumer.putAll(ControlClientSettings.consumer(kafka.buildConsumerProperties(), topics, self));
                        admin.putAll(context.getBean(KafkaAdmin.class).getConfigurationProperties());
                    });
            // KafkaConsumer adds the value deserializer that ControlInboxes hands over as an instance.
            consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);

            Clients clients = new Clients(this, pod, env, producer, consumer, admin);
            clients.each((client, config) -> {
                assertThat(config.getList("bootstrap.servers")).as(client).isEqualTo(BOOTSTRAP);
                if (config instanceof ProducerConfig) {
                    // The control plane's own settings are still there on top of the security ones.
                    assertThat(config.getString("metadata.recovery.strategy")).as(client).isEqualTo("none");
                    assertThat(config.getBoolean("enable.idempotence")).as(client).isTrue();
                }
            });
            return clients;
        }

        /**
         * The process environment and nothing else from this JVM (no system properties, none of the build's
         * variables), under the name Boot maps environment variables for, above the service's application.yaml.
         */
        private static void processEnvironment(ConfigurableEnvironment environment, Map<String, String> env,
                Path applicationYaml) {
            MutablePropertySources sources = environment.getPropertySources();
            sources.remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
            sources.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
                    StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new LinkedHashMap<>(env)));
            try {
                new YamlPropertySourceLoader().load("Config resource 'class path resource [application.yaml]'",
                        new FileSystemResource(applicationYaml)).forEach(sources::addLast);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** The configs one service's producer, consumer and admin client are created with, parsed by Kafka. */
    private record Clients(Service service, PodSpec pod, Map<String, String> env, Map<String, Object> producer,
            Map<String, Object> consumer, Map<String, Object> admin) {

        interface ClientCheck {
            void check(String client, AbstractConfig config);
        }

        void each(ClientCheck check) {
            String name = service.name().toLowerCase();
            check.check(name + " producer", new ProducerConfig(producer));
            check.check(name + " consumer", new ConsumerConfig(consumer));
            check.check(name + " admin", new AdminClientConfig(admin));
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // The kubelet

    /**
     * What the kubelet does with a container spec before the process starts, for the parts the chart uses: Secret
     * volumes written out under {@code root} (the node's view of the container's file system), and the environment
     * built in order, {@code valueFrom} resolved from the given Secrets and the downward API, {@code $(VAR)} in a
     * {@code value} replaced by a variable defined before it ({@code $$} is a literal {@code $}; a reference to
     * anything else is left as it is).
     */
    private static final class Kubelet {

        private static final Pattern LABEL_FIELD = Pattern.compile("metadata\\.labels\\['([^']+)'\\]");

        private final Path root;
        private final Map<String, Map<String, String>> secrets;

        Kubelet(Path root, Map<String, Map<String, String>> secrets) {
            this.root = root;
            this.secrets = secrets;
        }

        void mount(PodSpec pod, Container container) {
            for (VolumeMount mount : container.getVolumeMounts()) {
                Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
                        .orElseThrow(() -> new AssertionError("volumeMount " + mount.getName() + " has no volume"));
                SecretVolumeSource source = volume.getSecret();
                if (source == null || !secrets.containsKey(source.getSecretName())) {
                    continue; // config maps, emptyDirs and the admin token play no part in Kafka's settings
                }
                Map<String, String> data = secrets.get(source.getSecretName());
                Map<String, String> files = new LinkedHashMap<>();
                if (source.getItems() == null || source.getItems().isEmpty()) {
                    data.forEach(files::put);
                } else {
                    for (KeyToPath item : source.getItems()) {
                        files.put(item.getPath(), secretValue(source.getSecretName(), item.getKey()));
                    }
                }
                files.forEach((path, content) -> write(hostPath(mount.getMountPath() + "/" + path), content));
            }
        }

        Map<String, String> environment(Service service, Container container) {
            assertThat(container.getEnvFrom()).as("envFrom").isNullOrEmpty();
            Map<String, String> env = new LinkedHashMap<>();
            for (EnvVar var : container.getEnv()) {
                EnvVarSource from = var.getValueFrom();
                String value;
                if (from == null) {
                    value = expand(var.getValue() == null ? "" : var.getValue(), env);
                } else if (from.getSecretKeyRef() != null) {
                    value = secretValue(from.getSecretKeyRef().getName(), from.getSecretKeyRef().getKey());
                } else if (from.getFieldRef() != null) {
                    value = field(service, from.getFieldRef().getFieldPath());
                } else {
                    throw new AssertionError("unsupported valueFrom in env " + var.getName() + ": " + from);
                }
                env.put(var.getName(), value);
            }
            return env;
        }

        /** Kafka builds the client's channel (JAAS login, SSL context with the trust store) and closes it again. */
        void assertKafkaChannelBuilds(AbstractConfig config, String client) {
            Map<String, Object> originals = new HashMap<>(config.originals());
            Object location = originals.get("ssl.truststore.location");
            if (location != null) {
                // The container's path is where the kubelet mounted the Secret; here that is under root.
                originals.put("ssl.truststore.location", hostPath(location.toString()).toString());
            }
            AbstractConfig onNode = sameKind(config, originals);
            if (location != null) {
                DefaultSslEngineFactory ssl = new DefaultSslEngineFactory();
                try {
                    ssl.configure(onNode.values());
                    assertThat(catchingKeyStore(() -> ssl.truststore().getCertificateAlias(caCertificate))).as(client)
                            .isNotNull();
                } finally {
                    ssl.close();
                }
            }
            ChannelBuilder channel = ClientUtils.createChannelBuilder(onNode, Time.SYSTEM, new LogContext("[" + client + "] "));
            channel.close();
        }

        private static AbstractConfig sameKind(AbstractConfig config, Map<String, Object> originals) {
            if (config instanceof ProducerConfig) {
                return new ProducerConfig(originals);
            }
            if (config instanceof ConsumerConfig) {
                return new ConsumerConfig(originals);
            }
            return new AdminClientConfig(originals);
        }

        private interface KeyStoreCall<T> {
            T call() throws Exception;
        }

        private static <T> T catchingKeyStore(KeyStoreCall<T> call) {
            try {
                return call.call();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        Path hostPath(String containerPath) {
            assertThat(containerPath).startsWith("/");
            return root.resolve(containerPath.substring(1));
        }

        private String secretValue(String secret, String key) {
            Map<String, String> data = secrets.get(secret);
            if (data == null || !data.containsKey(key)) {
                throw new AssertionError("Secret " + secret + " has no key " + key
                        + ": the pod would not start (CreateContainerConfigError)");
            }
            return data.get(key);
        }

        private static String field(Service service, String path) {
            return switch (path) {
                case "metadata.name" -> service.podName;
                case "metadata.namespace" -> Chart.NAMESPACE;
                case "status.podIP" -> "10.42.0.17";
                default -> {
                    Matcher label = LABEL_FIELD.matcher(path);
                    if (label.matches() && service.podLabels.containsKey(label.group(1))) {
                        yield service.podLabels.get(label.group(1));
                    }
                    throw new AssertionError("unsupported fieldRef " + path + " for " + service);
                }
            };
        }

        /** Kubernetes' expansion of {@code $(VAR)} (third_party/forked/golang/expansion). */
        static String expand(String input, Map<String, String> defined) {
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < input.length(); i++) {
                char c = input.charAt(i);
                if (c != '$' || i + 1 >= input.length()) {
                    out.append(c);
                    continue;
                }
                char next = input.charAt(i + 1);
                if (next == '$') {
                    out.append('$');
                    i++;
                } else if (next == '(') {
                    int close = input.indexOf(')', i + 2);
                    if (close < 0) {
                        out.append("$(");
                        i++;
                    } else {
                        String name = input.substring(i + 2, close);
                        out.append(defined.containsKey(name) ? defined.get(name) : "$(" + name + ")");
                        i = close;
                    }
                } else {
                    out.append('$').append(next);
                    i++;
                }
            }
            return out.toString();
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
}
