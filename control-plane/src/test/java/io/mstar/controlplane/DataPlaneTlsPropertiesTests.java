package io.mstar.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.testing.TestCertificates;

/**
 * {@code mstar.data-plane.tls.*} bound by Spring as a service binds it, from properties and from environment variables
 * (the Helm chart's way); a service with TLS on and a file missing or wrong does not start, and says which property.
 */
class DataPlaneTlsPropertiesTests {

    /** What a service does with the settings: builds the data port's TLS at start-up. */
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(DataPlaneSecurityProperties.class)
    static class AService {

        @Bean
        DataPlaneTls dataPlaneTls(DataPlaneSecurityProperties properties) {
            return properties.dataPlaneTls();
        }
    }

    @TempDir
    static Path dir;

    private static TestCertificates.Pem pem;
    private static TestCertificates.Pem other;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(AService.class)
            .withPropertyValues("mstar.data-plane.secret=test-only-data-plane-secret-0123456789abcdef");

    @BeforeAll
    static void makeCertificates() {
        pem = TestCertificates.selfSigned(dir, "deployment", TestCertificates.LOOPBACK);
        other = TestCertificates.selfSigned(dir, "other", TestCertificates.LOOPBACK);
    }

    @Test
    void tlsIsOffByDefault() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            DataPlaneSecurityProperties properties = context.getBean(DataPlaneSecurityProperties.class);
            assertThat(properties.tls().enabled()).isFalse();
            assertThat(properties.tls().certificateFile()).isEmpty();
            assertThat(context.getBean(DataPlaneTls.class).enabled()).isFalse();
            assertThat(properties.readGrants().enabled()).as("the grant settings bind as before").isTrue();
        });
    }

    @Test
    void theSettingsBindFromKebabCaseProperties() {
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate(),
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey(),
                "mstar.data-plane.tls.trust-file=" + pem.certificate(),
                "mstar.data-plane.tls.server-name=mstar-data-plane").run(context -> {
                    assertThat(context).hasNotFailed();
                    DataPlaneSecurityProperties.Tls tls = context.getBean(DataPlaneSecurityProperties.class).tls();
                    assertThat(tls).isEqualTo(new DataPlaneSecurityProperties.Tls(true, pem.certificate().toString(),
                            pem.privateKey().toString(), pem.certificate().toString(), "mstar-data-plane"));
                    DataPlaneTls built = context.getBean(DataPlaneTls.class);
                    assertThat(built.enabled()).isTrue();
                    assertThat(built.trustFile()).contains(pem.certificate());
                    assertThat(built.serverName()).contains("mstar-data-plane");
                });
    }

    @Test
    void theSettingsBindFromEnvironmentVariablesAndTheTrustFileDefaultsToTheCertificate() {
        runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, Map.of(
                        "MSTAR_DATA_PLANE_TLS_ENABLED", "true",
                        "MSTAR_DATA_PLANE_TLS_CERTIFICATE_FILE", pem.certificate().toString(),
                        "MSTAR_DATA_PLANE_TLS_PRIVATE_KEY_FILE", pem.privateKey().toString()))))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    DataPlaneTls built = context.getBean(DataPlaneTls.class);
                    assertThat(built.enabled()).isTrue();
                    assertThat(built.certificateFile()).contains(pem.certificate());
                    assertThat(built.privateKeyFile()).contains(pem.privateKey());
                    assertThat(built.trustFile()).as("a self-signed deployment certificate trusts itself")
                            .contains(pem.certificate());
                    assertThat(built.serverName()).isEmpty();
                });
    }

    @Test
    void withTlsOnAndNoCertificateTheServiceDoesNotStartAndSaysWhichPropertyToSet() {
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey()).run(context ->
                        assertThat(context).getFailure().rootCause()
                                .hasMessageContaining("mstar.data-plane.tls.certificate-file is not set")
                                .hasMessageContaining("mstar.data-plane.tls.enabled=false"));
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate()).run(context ->
                        assertThat(context).getFailure().rootCause()
                                .hasMessageContaining("mstar.data-plane.tls.private-key-file is not set"));
    }

    @Test
    void aMissingCertificateFileIsNamedWithItsProperty() {
        Path absent = dir.resolve("absent.crt");
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + absent,
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey()).run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure()))
                            .contains("mstar.data-plane.tls.certificate-file " + absent + ": no such file");
                });
    }

    @Test
    void anUnreadableOrForeignKeyIsNamedWithItsProperty() throws IOException {
        Path garbage = Files.writeString(dir.resolve("garbage.key"), "this is not a key\n");
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate(),
                "mstar.data-plane.tls.private-key-file=" + garbage).run(context ->
                        assertThat(messages(context.getStartupFailure()))
                                .contains("mstar.data-plane.tls.private-key-file " + garbage)
                                .contains("no PEM private key"));
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate(),
                "mstar.data-plane.tls.private-key-file=" + other.privateKey()).run(context ->
                        assertThat(messages(context.getStartupFailure()))
                                .contains("mstar.data-plane.tls.private-key-file " + other.privateKey())
                                .contains("does not belong to the certificate"));
    }

    @Test
    void aMissingTrustFileAndABadServerNameAreNamedWithTheirProperties() {
        Path absent = dir.resolve("absent-ca.crt");
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate(),
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey(),
                "mstar.data-plane.tls.trust-file=" + absent).run(context ->
                        assertThat(messages(context.getStartupFailure()))
                                .contains("mstar.data-plane.tls.trust-file " + absent + ": no such file"));
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate(),
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey(),
                "mstar.data-plane.tls.server-name=10.1.2.3").run(context ->
                        assertThat(messages(context.getStartupFailure()))
                                .contains("mstar.data-plane.tls.server-name 10.1.2.3: not a DNS name"));
    }

    @Test
    void withTlsOffTheFilesAreNotRead() {
        runner.withPropertyValues("mstar.data-plane.tls.certificate-file=" + dir.resolve("absent.crt"),
                "mstar.data-plane.tls.private-key-file=" + dir.resolve("absent.key")).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(DataPlaneTls.class).enabled()).isFalse();
                });
    }

    /** Every message of the failure's cause chain, one per line. */
    private static String messages(Throwable failure) {
        assertThat(failure).as("the context failed").isNotNull();
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }
}
