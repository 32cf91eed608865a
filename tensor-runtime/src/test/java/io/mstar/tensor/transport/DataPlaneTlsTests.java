package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.transport.TensorTransportException.Reason;
import io.mstar.testing.TestCertificates;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the data port with real certificates made at test time: a reader with TLS reads a server with TLS, with
 * grants, byte for byte; every mismatch of TLS mode or trust fails the read with {@link Reason#TLS}, never a fall
 * back to plain HTTP and never a tensor served; with TLS off everything is plain HTTP as before.
 */
class DataPlaneTlsTests {

    private static final byte[] SECRET = "a-data-plane-secret-of-thirty-two-bytes!".getBytes(StandardCharsets.UTF_8);
    /** Not ASCII, not a multiple of anything: every byte must land where it belongs. */
    private static final byte[] TENSOR = new byte[70_001];

    static {
        for (int i = 0; i < TENSOR.length; i++) {
            TENSOR[i] = (byte) (i * 31 + 7);
        }
    }

    @TempDir
    static Path certificates;

    private static DataPlaneTls deployment;
    private static DataPlaneTls otherDeployment;
    private static TestCertificates.Pem deploymentPem;
    private static TestCertificates.Pem namedPem;
    private static TestCertificates.Pem caSignedPem;

    @TempDir
    Path arenaDir;

    private final ReadGrants grants = ReadGrants.signedWith(SECRET, Duration.ofSeconds(60), Clock.systemUTC());
    private final SimpleMeterRegistry serverRegistry = new SimpleMeterRegistry();
    private final ServedTensors tensors = new ServedTensors();
    private TensorServer server;

    @BeforeAll
    static void makeCertificates() {
        deploymentPem = TestCertificates.selfSigned(certificates, "deployment", TestCertificates.LOOPBACK);
        deployment = DataPlaneTls.fromPem(deploymentPem.certificate(), deploymentPem.privateKey(),
                deploymentPem.certificate(), null);
        TestCertificates.Pem other = TestCertificates.selfSigned(certificates, "other", TestCertificates.LOOPBACK);
        otherDeployment = DataPlaneTls.fromPem(other.certificate(), other.privateKey(), other.certificate(), null);
        namedPem = TestCertificates.selfSigned(certificates, "named", "dns:mstar-data-plane");
        TestCertificates.authority(certificates, "deployment-ca");
        caSignedPem = TestCertificates.signedBy(certificates, "deployment-ca", "pod", TestCertificates.LOOPBACK);
    }

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
        assertThat(tensors.pins()).as("every pin released").isZero();
    }

    @Test
    void aReaderWithTlsReadsATlsServersTensorWithAGrantByteForByte() throws Exception {
        serve(deployment);
        assertThat(server.tls()).isTrue();
        assertThat(server.sessionId()).as("descriptors do not change with TLS").isEqualTo("127.0.0.1:" + server.port());

        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = reader(arena, deployment, grants)) {
            assertThat(readAll(reader)).isEqualTo(TENSOR);
            ByteBuffer range = ByteBuffer.allocateDirect(5000);
            reader.read("r", info(1000, 5000), range).get(10, TimeUnit.SECONDS);
            byte[] ranged = new byte[5000];
            range.duplicate().get(ranged);
            assertThat(ranged).isEqualTo(java.util.Arrays.copyOfRange(TENSOR, 1000, 6000));
        }
        assertThat(rejected()).as("the grants were checked and accepted over TLS").isZero();
    }

    @Test
    void aServerWithTlsStillRefusesAReadWithoutAGrant() {
        serve(deployment);
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = reader(arena, deployment, ReadGrants.disabled())) {
            assertThat(failure(reader).reason()).isEqualTo(Reason.UNAUTHORIZED);
        }
        assertThat(rejected()).isEqualTo(1);
    }

    @Test
    void aReaderWithTlsRefusesAPlainTextServer() {
        serve(DataPlaneTls.disabled());
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = reader(arena, deployment, grants)) {
            TensorTransportException e = failure(reader);
            assertThat(e.reason()).isEqualTo(Reason.TLS);
            assertThat(e.retriable()).isFalse();
            assertThat(e.getCause()).as("the plain answer to the TLS hello").isInstanceOf(SSLException.class);
            assertThat(e).hasMessageContaining("127.0.0.1:" + server.port()).hasMessageContaining("mstar.data-plane.tls");
        }
        assertThat(rejected()).as("no request reached the plain server's handler").isZero();
    }

    @Test
    void aReaderWithoutTlsCannotReadATlsServer() throws Exception {
        serve(deployment);
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = reader(arena, DataPlaneTls.disabled(), grants)) {
            TensorTransportException e = failure(reader);
            assertThat(e.reason()).isEqualTo(Reason.TLS);
            assertThat(e.retriable()).isFalse();
            assertThat(e).hasMessageContaining("TLS off");
        }
        // What any plain client gets: a redirect to https, no tensor bytes, and the grant check never ran.
        HttpResponse<byte[]> plain = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + server.port() + "/tensors/7")).header(ReadGrants.HEADER, grants.issue(7, "worker-1"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(plain.statusCode()).isEqualTo(308);
        assertThat(plain.headers().firstValue("location")).hasValueSatisfying(l -> assertThat(l).startsWith("https://"));
        assertThat(plain.body()).isEmpty();
        assertThat(rejected()).isZero();
    }

    @Test
    void aReaderTrustingAnotherCertificateRefusesTheServer() {
        serve(deployment);
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = reader(arena, otherDeployment, grants)) {
            TensorTransportException e = failure(reader);
            assertThat(e.reason()).isEqualTo(Reason.TLS);
            assertThat(e.retriable()).isFalse();
            assertThat(e.getCause()).isInstanceOf(SSLHandshakeException.class).hasMessageContaining("PKIX");
        }
        assertThat(rejected()).isZero();
    }

    @Test
    void aCertificateSignedByTheDeploymentCaIsTrustedThroughTheCaBundle() throws Exception {
        Path ca = certificates.resolve("deployment-ca.crt");
        serve(DataPlaneTls.fromPem(caSignedPem.certificate(), caSignedPem.privateKey(), ca, null));
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader trustsTheCa = reader(arena, DataPlaneTls.fromPem(caSignedPem.certificate(),
                        caSignedPem.privateKey(), ca, null), grants);
                TensorReader trustsAnother = reader(arena, otherDeployment, grants)) {
            assertThat(readAll(trustsTheCa)).isEqualTo(TENSOR);
            assertThat(failure(trustsAnother).reason()).isEqualTo(Reason.TLS);
        }
    }

    @Test
    void aCertificateWithoutTheHostReadFromIsRefusedUnlessTheServerNameNamesIt() throws Exception {
        // The certificate names mstar-data-plane only; the reader connects to 127.0.0.1.
        serve(DataPlaneTls.fromPem(namedPem.certificate(), namedPem.privateKey(), namedPem.certificate(), null));
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader byHost = reader(arena, DataPlaneTls.fromPem(namedPem.certificate(), namedPem.privateKey(),
                        namedPem.certificate(), null), grants);
                TensorReader byServerName = reader(arena, DataPlaneTls.fromPem(namedPem.certificate(),
                        namedPem.privateKey(), namedPem.certificate(), "mstar-data-plane"), grants);
                TensorReader byAnotherName = reader(arena, DataPlaneTls.fromPem(namedPem.certificate(),
                        namedPem.privateKey(), namedPem.certificate(), "not-the-data-plane"), grants)) {
            TensorTransportException refused = failure(byHost);
            assertThat(refused.reason()).as("hostname verification is on").isEqualTo(Reason.TLS);
            assertThat(refused.getCause()).isInstanceOf(SSLHandshakeException.class)
                    .hasMessageContaining("subject alternative names");
            assertThat(readAll(byServerName)).isEqualTo(TENSOR);
            assertThat(failure(byAnotherName).reason()).isEqualTo(Reason.TLS);
        }
    }

    @Test
    void anRsaKeyInPkcs1FormAsHelmAndCertManagerWriteItServesAndIsRead() throws Exception {
        TestCertificates.Pem rsa = TestCertificates.selfSignedRsaPkcs1(certificates, "rsa", TestCertificates.LOOPBACK);
        assertThat(java.nio.file.Files.readString(rsa.privateKey())).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        DataPlaneTls tls = DataPlaneTls.fromPem(rsa.certificate(), rsa.privateKey(), rsa.certificate(), null);
        serve(tls);
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = reader(arena, tls, grants)) {
            assertThat(readAll(reader)).isEqualTo(TENSOR);
        }
        assertInvalid(() -> DataPlaneTls.fromPem(deploymentPem.certificate(), rsa.privateKey(),
                deploymentPem.certificate(), null), DataPlaneTls.Part.PRIVATE_KEY, "does not belong to the certificate");
    }

    @Test
    void withTlsOffEverythingIsPlainHttpAsBefore() throws Exception {
        serve(DataPlaneTls.disabled());
        assertThat(server.tls()).isFalse();
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = new TensorReader(ReaderSettings.defaults("worker", Set.of("127.0.0.1"))
                        .withSameHost(SameHostPolicy.NEVER).withArenaDirectory(arenaDir), arena,
                        new SimpleMeterRegistry(), grants, "worker-1")) {
            assertThat(readAll(reader)).isEqualTo(TENSOR);
        }
        HttpResponse<byte[]> plain = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + server.port() + "/tensors/7")).header(ReadGrants.HEADER, grants.issue(7, "worker-1"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(plain.statusCode()).isEqualTo(200);
        assertThat(plain.body()).isEqualTo(TENSOR);
        assertThat(DataPlaneTls.disabled().enabled()).isFalse();
        assertThat(DataPlaneTls.disabled().scheme()).isEqualTo("http");
    }

    @Test
    void aHandshakeThatTimesOutIsRetriableAndAnyOtherTlsFailureIsNot() {
        assertThat(TensorReader.tlsFailure(new java.io.IOException("reset", new javax.net.ssl.SSLHandshakeException(
                "PKIX path building failed")))).isTrue();
        assertThat(TensorReader.tlsFailure(new io.netty.handler.ssl.SslHandshakeTimeoutException("timed out")))
                .isFalse();
        assertThat(TensorReader.tlsFailure(new java.net.ConnectException("refused"))).isFalse();
    }

    @Test
    void theFilesAreCheckedWhenTheTlsIsMadeAndAProblemNamesTheFileItIsIn() throws Exception {
        Path cert = deploymentPem.certificate();
        Path key = deploymentPem.privateKey();
        Path dir = arenaDir;
        Path missing = dir.resolve("absent.crt");
        assertInvalid(() -> DataPlaneTls.fromPem(missing, key, cert, null), DataPlaneTls.Part.CERTIFICATE, "no such file");
        assertInvalid(() -> DataPlaneTls.fromPem(key, key, cert, null), DataPlaneTls.Part.CERTIFICATE,
                "no PEM certificate");
        Path garbled = java.nio.file.Files.writeString(dir.resolve("garbled.crt"),
                TestCertificates.pem("CERTIFICATE", "not a certificate".getBytes(StandardCharsets.US_ASCII)));
        assertInvalid(() -> DataPlaneTls.fromPem(garbled, key, cert, null), DataPlaneTls.Part.CERTIFICATE,
                "not a PEM certificate file");
        TestCertificates.Pem stale = TestCertificates.expired(certificates, "stale", TestCertificates.LOOPBACK);
        assertInvalid(() -> DataPlaneTls.fromPem(stale.certificate(), stale.privateKey(), stale.certificate(), null),
                DataPlaneTls.Part.CERTIFICATE, "expired");

        assertInvalid(() -> DataPlaneTls.fromPem(cert, dir.resolve("absent.key"), cert, null),
                DataPlaneTls.Part.PRIVATE_KEY, "no such file");
        assertInvalid(() -> DataPlaneTls.fromPem(cert, cert, cert, null), DataPlaneTls.Part.PRIVATE_KEY,
                "no PEM private key");
        Path pkcs1 = java.nio.file.Files.writeString(dir.resolve("pkcs1.key"),
                TestCertificates.pem("EC PRIVATE KEY", new byte[] {1, 2, 3}));
        assertInvalid(() -> DataPlaneTls.fromPem(cert, pkcs1, cert, null), DataPlaneTls.Part.PRIVATE_KEY,
                "openssl pkcs8");
        Path encrypted = java.nio.file.Files.writeString(dir.resolve("encrypted.key"),
                TestCertificates.pem("ENCRYPTED PRIVATE KEY", new byte[] {1, 2, 3}));
        assertInvalid(() -> DataPlaneTls.fromPem(cert, encrypted, cert, null), DataPlaneTls.Part.PRIVATE_KEY,
                "encrypted");
        Path notAKey = java.nio.file.Files.writeString(dir.resolve("junk.key"),
                TestCertificates.pem("PRIVATE KEY", new byte[] {1, 2, 3}));
        assertInvalid(() -> DataPlaneTls.fromPem(cert, notAKey, cert, null), DataPlaneTls.Part.PRIVATE_KEY,
                "not an RSA, EC or EdDSA PKCS#8 private key");
        assertInvalid(() -> DataPlaneTls.fromPem(cert, namedPem.privateKey(), cert, null),
                DataPlaneTls.Part.PRIVATE_KEY, "does not belong to the certificate");

        assertInvalid(() -> DataPlaneTls.fromPem(cert, key, dir.resolve("absent-ca.crt"), null), DataPlaneTls.Part.TRUST,
                "no such file");
        assertInvalid(() -> DataPlaneTls.fromPem(cert, key, key, null), DataPlaneTls.Part.TRUST, "no PEM certificate");

        assertThatThrownBy(() -> DataPlaneTls.fromPem(cert, key, cert, "10.0.0.7"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a DNS name");
        assertThatThrownBy(() -> DataPlaneTls.fromPem(cert, key, cert, "host:8443"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a DNS name");
        DataPlaneTls valid = DataPlaneTls.fromPem(cert, key, cert, " mstar-data-plane ");
        assertThat(valid.enabled()).isTrue();
        assertThat(valid.scheme()).isEqualTo("https");
        assertThat(valid.serverName()).contains("mstar-data-plane");
        assertThat(valid.toString()).doesNotContain("BEGIN");
    }

    private static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable make,
                                      DataPlaneTls.Part part, String problem) {
        assertThatThrownBy(make).isInstanceOf(DataPlaneTls.InvalidFileException.class)
                .hasMessageContaining(problem)
                .satisfies(e -> assertThat(((DataPlaneTls.InvalidFileException) e).part()).isEqualTo(part));
    }

    private void serve(DataPlaneTls tls) {
        tensors.publish(7, ByteBuffer.wrap(TENSOR), () -> { });
        server = TensorServer.start(tensors, new TensorServerSettings("127.0.0.1", 0, "127.0.0.1", 1, "worker", tls),
                grants, serverRegistry);
    }

    private TensorReader reader(ArenaReader arena, DataPlaneTls tls, ReadGrants readerGrants) {
        ReaderSettings settings = ReaderSettings.defaults("worker", Set.of("127.0.0.1"))
                .withSameHost(SameHostPolicy.NEVER).withArenaDirectory(arenaDir).withTls(tls);
        assertThat(settings.tls()).isSameAs(tls);
        return new TensorReader(settings, arena, new SimpleMeterRegistry(), readerGrants, "worker-1");
    }

    private TensorPointerInfo info(long offset, long nbytes) {
        return new TensorPointerInfo(7, List.of((long) TENSOR.length), List.of(1L), "uint8", nbytes, 0L, offset,
                "127.0.0.1:" + server.port(), "worker-0", 1, 0, null, 0L, null, null);
    }

    private byte[] readAll(TensorReader reader) throws InterruptedException, ExecutionException, TimeoutException {
        ByteBuffer into = ByteBuffer.allocateDirect(TENSOR.length);
        ReadResult result = reader.read("r", info(0, TENSOR.length), into).get(10, TimeUnit.SECONDS);
        assertThat(result.transport()).isEqualTo(Transport.HTTP);
        byte[] bytes = new byte[TENSOR.length];
        into.duplicate().get(bytes);
        return bytes;
    }

    private TensorTransportException failure(TensorReader reader) {
        Throwable thrown = catchThrowable(() ->
                reader.read("r", info(0, TENSOR.length), ByteBuffer.allocateDirect(TENSOR.length))
                        .orTimeout(20, TimeUnit.SECONDS).join());
        assertThat(thrown).isInstanceOf(CompletionException.class).hasCauseInstanceOf(TensorTransportException.class);
        return (TensorTransportException) thrown.getCause();
    }

    private double rejected() {
        return serverRegistry.find("mstar.worker.tensor.reads.rejected").counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }
}
