package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.tensor.transport.TensorServerSettings;
import io.mstar.tensor.transport.TensorTransportException;
import io.mstar.testing.TestCertificates;

/**
 * A worker's data plane built with the deployment's TLS serves its data port over HTTPS only and reads peers over
 * TLS with grants; the constructors without TLS keep it plain HTTP.
 */
class WorkerDataPlaneTlsTests {

    private static final ReadGrants GRANTS = ReadGrants.signedWith(
            "test-only-data-plane-secret-0123456789abcdef".getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(60),
            Clock.systemUTC());

    @TempDir
    static Path dir;

    private static TestCertificates.Pem pem;
    private static DataPlaneTls tls;

    @BeforeAll
    static void makeCertificate() {
        pem = TestCertificates.selfSigned(dir, "deployment", TestCertificates.LOOPBACK);
        tls = DataPlaneTls.fromPem(pem.certificate(), pem.privateKey(), pem.certificate(), null);
    }

    @Test
    void withTlsTheWorkersDataPortIsHttpsOnlyAndItsReaderReadsAPeerOverTls(@TempDir Path arena) throws Exception {
        byte[] peerTensor = "a peer's tensor".getBytes(StandardCharsets.UTF_8);
        ServedTensors peerTensors = new ServedTensors();
        peerTensors.publish(9, ByteBuffer.wrap(peerTensor), () -> { });
        try (WorkerDataPlane data = new WorkerDataPlane(EntityId.worker(1), settings(arena),
                new HostDevice(HostDevice.NAME, 1 << 20), new SimpleMeterRegistry(), GRANTS, tls);
                TensorServer peer = TensorServer.start(peerTensors, new TensorServerSettings("127.0.0.1", 0,
                        "127.0.0.1", 1, "worker", tls), GRANTS, new SimpleMeterRegistry())) {
            int port = port(data.sessionId());
            assertThat(plain(port).statusCode()).as("plain HTTP is redirected to https").isEqualTo(308);
            assertThat(overTls(port).statusCode()).as("HTTPS reaches the grant check").isEqualTo(401);

            ByteBuffer into = ByteBuffer.allocateDirect(peerTensor.length);
            data.parts().reader().read("r", info(9, peerTensor.length, peer.sessionId()), into).get(10, TimeUnit.SECONDS);
            byte[] bytes = new byte[peerTensor.length];
            into.duplicate().get(bytes);
            assertThat(bytes).isEqualTo(peerTensor);
        }
    }

    @Test
    void withoutTlsTheWorkersDataPortIsPlainHttpAndATlsPeerFailsItsReadsWithTls(@TempDir Path arena)
            throws Exception {
        ServedTensors peerTensors = new ServedTensors();
        peerTensors.publish(9, ByteBuffer.wrap(new byte[] {1, 2, 3}), () -> { });
        try (WorkerDataPlane data = new WorkerDataPlane(EntityId.worker(1), settings(arena),
                new HostDevice(HostDevice.NAME, 1 << 20), new SimpleMeterRegistry(), GRANTS);
                TensorServer tlsPeer = TensorServer.start(peerTensors, new TensorServerSettings("127.0.0.1", 0,
                        "127.0.0.1", 1, "worker", tls), GRANTS, new SimpleMeterRegistry())) {
            assertThat(plain(port(data.sessionId())).statusCode()).as("plain HTTP reaches the grant check")
                    .isEqualTo(401);
            Throwable thrown = catchThrowable(() -> data.parts().reader().read("r", info(9, 3, tlsPeer.sessionId()),
                    ByteBuffer.allocateDirect(3)).orTimeout(20, TimeUnit.SECONDS).join());
            assertThat(thrown).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(TensorTransportException.class);
            assertThat(((TensorTransportException) thrown.getCause()).reason())
                    .isEqualTo(TensorTransportException.Reason.TLS);
        }
    }

    private static WorkerDataProperties settings(Path arena) {
        return new WorkerDataProperties("127.0.0.1", 0, "127.0.0.1", arena, DataSize.ofKilobytes(256), 2,
                DataSize.ofMegabytes(64));
    }

    private static TensorPointerInfo info(long uuid, int nbytes, String source) {
        return new TensorPointerInfo(uuid, List.of((long) nbytes), List.of(1L), "uint8", nbytes, 0L, source,
                "worker-0");
    }

    private static int port(String sessionId) {
        return Integer.parseInt(sessionId.substring(sessionId.lastIndexOf(':') + 1));
    }

    private static HttpResponse<String> plain(int port) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/tensors/9")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A JDK client trusting the deployment certificate, hostname verification on. */
    private static HttpResponse<String> overTls(int port) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(pem.certificate())) {
            trust.setCertificateEntry("deployment", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, trustManagers.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ssl).build().send(HttpRequest.newBuilder(URI.create(
                "https://127.0.0.1:" + port + "/tensors/9")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
