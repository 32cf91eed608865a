package io.mstar.conductor.tensors;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.controlplane.DataPlaneSecurityProperties;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.testing.TestCertificates;

/**
 * The conductor's tensor server and reader take the data port's TLS from {@code mstar.data-plane.tls.*}: with TLS on,
 * the server answers HTTPS only and the conductor's own reader reads it over TLS with a grant; off, both are plain HTTP
 * as before; a TLS setting that is wrong stops the context.
 */
class ConductorDataPlaneTlsTests {

    /** What the conductor's application context gives TensorsConfiguration. */
    @Configuration(proxyBeanMethods = false)
    @Import(TensorsConfiguration.class)
    @EnableConfigurationProperties({ConductorDataProperties.class, DataPlaneSecurityProperties.class})
    static class TheConductorsDataPlane {

        @Bean
        ReadGrants readGrants(DataPlaneSecurityProperties security) {
            return security.readGrants();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @TempDir
    static Path dir;

    private static TestCertificates.Pem pem;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(TheConductorsDataPlane.class)
            .withPropertyValues("mstar.data-plane.secret=test-only-data-plane-secret-0123456789abcdef",
                    "mstar.conductor.data.bind-address=127.0.0.1");

    @BeforeAll
    static void makeCertificate() {
        pem = TestCertificates.selfSigned(dir, "deployment", TestCertificates.LOOPBACK);
    }

    @Test
    void withTlsOnTheConductorServesHttpsOnlyAndReadsItsOwnServerOverTls() {
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + pem.certificate(),
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey()).run(context -> {
                    assertThat(context).hasNotFailed();
                    TensorServer server = context.getBean(TensorServer.class);
                    assertThat(server.tls()).isTrue();
                    assertThat(context.getBean(DataPlaneTls.class).enabled()).isTrue();
                    assertThat(readOwnTensor(context)).isEqualTo("client input");
                    assertThat(plainGet(server).statusCode()).as("plain HTTP is redirected, not served").isEqualTo(308);
                });
    }

    @Test
    void withTlsOffTheConductorServesAndReadsPlainHttpAsBefore() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            TensorServer server = context.getBean(TensorServer.class);
            assertThat(server.tls()).isFalse();
            assertThat(readOwnTensor(context)).isEqualTo("client input");
            assertThat(plainGet(server).statusCode()).as("plain HTTP reaches the grant check").isEqualTo(401);
        });
    }

    @Test
    void aWrongTlsSettingStopsTheConductorNamingTheProperty() {
        runner.withPropertyValues("mstar.data-plane.tls.enabled=true",
                "mstar.data-plane.tls.certificate-file=" + dir.resolve("absent.crt"),
                "mstar.data-plane.tls.private-key-file=" + pem.privateKey()).run(context -> {
                    assertThat(context).hasFailed();
                    // What Spring Boot prints: the bean that failed and the message naming the property.
                    assertThat(context).getFailure().hasMessageContaining("conductorDataPlaneTls")
                            .hasMessageContaining("mstar.data-plane.tls.certificate-file " + dir.resolve("absent.crt")
                                    + ": no such file");
                });
    }

    private static String readOwnTensor(AssertableApplicationContext context) throws Exception {
        byte[] input = "client input".getBytes(StandardCharsets.UTF_8);
        context.getBean(ServedTensors.class).publish(41, ByteBuffer.wrap(input), () -> { });
        TensorServer server = context.getBean(TensorServer.class);
        TensorPointerInfo info = new TensorPointerInfo(41, List.of((long) input.length), List.of(1L), "uint8",
                input.length, 0L, server.sessionId(), "conductor");
        ByteBuffer into = ByteBuffer.allocateDirect(input.length);
        context.getBean(TensorReader.class).read("r", info, into).get(10, TimeUnit.SECONDS);
        byte[] bytes = new byte[input.length];
        into.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static HttpResponse<String> plainGet(TensorServer server) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                + "/tensors/41")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
