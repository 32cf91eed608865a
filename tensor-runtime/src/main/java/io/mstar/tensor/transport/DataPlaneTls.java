package io.mstar.tensor.transport;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * TLS on the data port (docs/security.md#tls-on-the-data-port): the deployment's certificate and private key, which
 * every tensor server presents, and the CA bundle every reader trusts, read once from PEM files and built once into
 * Netty {@link SslContext}s. {@link #disabled()} is plain HTTP, the default.
 *
 * <p>With TLS a tensor server serves HTTPS only (a plain-HTTP request gets a redirect, which a plain reader reports as
 * {@link TensorTransportException.Reason#TLS}), and a reader reads {@code https://} only, verifying the certificate
 * against the host of {@code source_session_id}, or against {@link #serverName()} when one is set, so one certificate
 * can serve every pod of a deployment whatever their addresses. Protocols and ciphers are Netty's defaults (TLS 1.3
 * and 1.2); there is no client certificate: read grants authenticate readers.
 *
 * <p>Immutable and thread-safe.
 */
public final class DataPlaneTls {

    /** Which of the files a problem is in: the caller names the setting it came from. */
    public enum Part {
        /** The certificate chain the servers present, leaf first. */
        CERTIFICATE,
        /** The PKCS#8 private key of the leaf certificate. */
        PRIVATE_KEY,
        /** The CA bundle readers trust. */
        TRUST
    }

    /** A file that is missing, unreadable or not what it should be. */
    public static final class InvalidFileException extends IllegalArgumentException {

        private static final long serialVersionUID = 1L;

        private final Part part;
        private final transient Path file;

        InvalidFileException(Part part, Path file, String problem, Throwable cause) {
            super(file + ": " + problem, cause);
            this.part = part;
            this.file = file;
        }

        public Part part() {
            return part;
        }

        public Path file() {
            return file;
        }
    }

    private static final DataPlaneTls DISABLED = new DataPlaneTls(null, null, null, null, null, null);

    private static final Pattern PEM_BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);
    /** A DNS name as {@link SNIHostName} accepts it: no IP literal, no port. */
    private static final Pattern SERVER_NAME = Pattern.compile("(?i)[a-z0-9]([a-z0-9-]{0,62})(\\.[a-z0-9]([a-z0-9-]{0,62}))*");

    private static final Pattern IPV4 = Pattern.compile("[0-9]+(\\.[0-9]+){3}");

    private final Path certificateFile;
    private final Path privateKeyFile;
    private final Path trustFile;
    private final String serverName;
    private final SslContext server;
    private final SslContext client;

    private DataPlaneTls(Path certificateFile, Path privateKeyFile, Path trustFile, String serverName,
                         SslContext server, SslContext client) {
        this.certificateFile = certificateFile;
        this.privateKeyFile = privateKeyFile;
        this.trustFile = trustFile;
        this.serverName = serverName;
        this.server = server;
        this.client = client;
    }

    /** Plain HTTP on the data port. */
    public static DataPlaneTls disabled() {
        return DISABLED;
    }

    /**
     * TLS with the PEM files of a deployment.
     *
     * @param certificateFile the certificate chain servers present, leaf first ({@code tls.crt})
     * @param privateKeyFile  the leaf's private key, unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----},
     *                        {@code tls.key}; RSA, EC or EdDSA), or an RSA key in PKCS#1
     *                        ({@code -----BEGIN RSA PRIVATE KEY-----})
     * @param trustFile       the CA certificates readers trust ({@code ca.crt}); the certificate file itself for a
     *                        self-signed certificate
     * @param serverName      the DNS name readers verify every server's certificate against (and send as SNI) instead
     *                        of the host they connect to; null or blank: the host of {@code source_session_id}
     * @throws InvalidFileException for a file that is missing, unreadable, holds no certificate or key, a key that is
     *         encrypted, SEC1 or does not belong to the certificate, or an expired certificate (one not yet valid is
     *         accepted: a moment's clock skew after issuance must not stop a service)
     * @throws IllegalArgumentException for a server name that is not a DNS name
     */
    public static DataPlaneTls fromPem(Path certificateFile, Path privateKeyFile, Path trustFile, String serverName) {
        Objects.requireNonNull(certificateFile, "certificateFile");
        Objects.requireNonNull(privateKeyFile, "privateKeyFile");
        Objects.requireNonNull(trustFile, "trustFile");
        String name = serverName == null || serverName.isBlank() ? null : serverName.trim();
        if (name != null && (!SERVER_NAME.matcher(name).matches() || IPV4.matcher(name).matches())) {
            throw new IllegalArgumentException("not a DNS name: " + name);
        }
        X509Certificate[] chain = certificates(Part.CERTIFICATE, certificateFile);
        try {
            chain[0].checkValidity();
        } catch (CertificateExpiredException e) {
            throw new InvalidFileException(Part.CERTIFICATE, certificateFile, "the certificate "
                    + chain[0].getSubjectX500Principal() + " is not valid now: it expired " + chain[0].getNotAfter(), e);
        } catch (CertificateNotYetValidException e) {
            // A certificate issued a moment ago on a host whose clock runs ahead: handshakes fail until it is valid,
            // but refusing to start would turn seconds of skew into a crash loop.
        }
        PrivateKey key = privateKey(privateKeyFile);
        if (!belongsTo(key, chain[0])) {
            throw new InvalidFileException(Part.PRIVATE_KEY, privateKeyFile, "the private key does not belong to "
                    + "the certificate " + chain[0].getSubjectX500Principal() + " of " + certificateFile, null);
        }
        X509Certificate[] trusted = certificates(Part.TRUST, trustFile);
        SslContext server;
        SslContext client;
        try {
            server = SslContextBuilder.forServer(key, chain).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new InvalidFileException(Part.CERTIFICATE, certificateFile, "cannot serve TLS with this certificate "
                    + "and key: " + e.getMessage(), e);
        }
        try {
            client = SslContextBuilder.forClient().trustManager(trusted).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new InvalidFileException(Part.TRUST, trustFile, "cannot trust these certificates: "
                    + e.getMessage(), e);
        }
        return new DataPlaneTls(certificateFile, privateKeyFile, trustFile, name, server, client);
    }

    /** Whether the data port speaks TLS. */
    public boolean enabled() {
        return server != null;
    }

    /** {@code https} with TLS, else {@code http}. */
    public String scheme() {
        return enabled() ? "https" : "http";
    }

    /** The name readers verify certificates against instead of the host they connect to, if one is set. */
    public Optional<String> serverName() {
        return Optional.ofNullable(serverName);
    }

    public Optional<Path> certificateFile() {
        return Optional.ofNullable(certificateFile);
    }

    public Optional<Path> privateKeyFile() {
        return Optional.ofNullable(privateKeyFile);
    }

    public Optional<Path> trustFile() {
        return Optional.ofNullable(trustFile);
    }

    /** The servers' context; only when {@link #enabled()}. */
    SslContext serverContext() {
        return Objects.requireNonNull(server, "TLS is disabled");
    }

    /** The readers' context, trusting the trust file; only when {@link #enabled()}. */
    SslContext clientContext() {
        return Objects.requireNonNull(client, "TLS is disabled");
    }

    /**
     * Applied to every reader connection's handler after Reactor Netty's own hostname verification: with a
     * {@link #serverName()}, the certificate is checked against that name (sent as SNI; the JDK checks the SNI name
     * first), not the host connected to.
     */
    void configureClient(SslHandler handler) {
        SSLEngine engine = handler.engine();
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        if (serverName != null) {
            parameters.setServerNames(List.of(new SNIHostName(serverName)));
        }
        engine.setSSLParameters(parameters);
    }

    @Override
    public String toString() {
        return enabled()
                ? "DataPlaneTls[certificate=" + certificateFile + ", key=" + privateKeyFile + ", trust=" + trustFile
                        + (serverName == null ? "" : ", serverName=" + serverName) + "]"
                : "DataPlaneTls[disabled]";
    }

    private static X509Certificate[] certificates(Part part, Path file) {
        byte[] bytes = read(part, file);
        List<X509Certificate> certificates = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (PemBlock block : pemBlocks(new String(bytes, StandardCharsets.US_ASCII))) {
                if (!block.type().equals("CERTIFICATE")) {
                    continue;
                }
                for (Certificate c : factory.generateCertificates(new ByteArrayInputStream(block.der()))) {
                    certificates.add((X509Certificate) c);
                }
            }
        } catch (CertificateException | IllegalArgumentException e) {
            throw new InvalidFileException(part, file, "not a PEM certificate file: " + e.getMessage(), e);
        }
        if (certificates.isEmpty()) {
            throw new InvalidFileException(part, file, "holds no PEM certificate (-----BEGIN CERTIFICATE-----)", null);
        }
        return certificates.toArray(X509Certificate[]::new);
    }

    private static PrivateKey privateKey(Path file) {
        String text = new String(read(Part.PRIVATE_KEY, file), StandardCharsets.US_ASCII);
        List<PemBlock> blocks;
        try {
            blocks = pemBlocks(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidFileException(Part.PRIVATE_KEY, file, "not a PEM private key: " + e.getMessage(), e);
        }
        for (PemBlock block : blocks) {
            switch (block.type()) {
                case "PRIVATE KEY" -> {
                    return pkcs8(file, block.der());
                }
                case "RSA PRIVATE KEY" -> {
                    // PKCS#1, as Helm's genSelfSignedCert and cert-manager's default encoding write RSA keys.
                    return pkcs8(file, pkcs8OfPkcs1(block.der()));
                }
                case "EC PRIVATE KEY" -> throw new InvalidFileException(Part.PRIVATE_KEY, file,
                        "the key is EC PRIVATE KEY (SEC1), not PKCS#8: convert it with `openssl pkcs8 -topk8 -nocrypt`, "
                                + "or give cert-manager's Certificate privateKey.encoding: PKCS8", null);
                case "ENCRYPTED PRIVATE KEY" -> throw new InvalidFileException(Part.PRIVATE_KEY, file,
                        "the key is encrypted; give it unencrypted (the file's mode and the Secret protect it)", null);
                default -> {
                    // a certificate or parameters next to the key: skip
                }
            }
        }
        throw new InvalidFileException(Part.PRIVATE_KEY, file, "holds no PEM private key (-----BEGIN PRIVATE KEY-----)",
                null);
    }

    private static PrivateKey pkcs8(Path file, byte[] der) {
        GeneralSecurityException last = null;
        for (String algorithm : List.of("EC", "RSA", "EdDSA", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw new InvalidFileException(Part.PRIVATE_KEY, file, "not an RSA, EC or EdDSA PKCS#8 private key", last);
    }

    /** {@code PrivateKeyInfo { 0, { rsaEncryption, NULL }, OCTET STRING pkcs1 } } (RFC 5208), in DER. */
    private static byte[] pkcs8OfPkcs1(byte[] pkcs1) {
        byte[] version = {0x02, 0x01, 0x00};
        byte[] rsaEncryption = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01,
            0x01, 0x01, 0x05, 0x00};
        byte[] key = der(0x04, pkcs1);
        byte[] body = new byte[version.length + rsaEncryption.length + key.length];
        System.arraycopy(version, 0, body, 0, version.length);
        System.arraycopy(rsaEncryption, 0, body, version.length, rsaEncryption.length);
        System.arraycopy(key, 0, body, version.length + rsaEncryption.length, key.length);
        return der(0x30, body);
    }

    /** One DER tag-length-value. */
    private static byte[] der(int tag, byte[] value) {
        int n = value.length;
        byte[] length = n < 0x80 ? new byte[] {(byte) n}
                : n < 0x100 ? new byte[] {(byte) 0x81, (byte) n}
                : n < 0x10000 ? new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n}
                : new byte[] {(byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n};
        byte[] out = new byte[1 + length.length + n];
        out[0] = (byte) tag;
        System.arraycopy(length, 0, out, 1, length.length);
        System.arraycopy(value, 0, out, 1 + length.length, n);
        return out;
    }

    /** Whether {@code key} signs what the certificate's public key verifies. */
    private static boolean belongsTo(PrivateKey key, X509Certificate certificate) {
        String algorithm = switch (key.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            case "EdDSA", "Ed25519", "Ed448" -> "EdDSA";
            default -> null;
        };
        if (algorithm == null) {
            return true; // RSASSA-PSS and the like: the handshake will tell
        }
        if (!certificate.getPublicKey().getAlgorithm().equals(key.getAlgorithm())
                && !(algorithm.equals("EdDSA") && certificate.getPublicKey().getAlgorithm().startsWith("Ed"))) {
            return false;
        }
        try {
            byte[] probe = "mstar data-plane key check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static byte[] read(Part part, Path file) {
        if (!Files.isRegularFile(file)) {
            throw new InvalidFileException(part, file, "no such file", null);
        }
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new InvalidFileException(part, file, "cannot be read: " + e, e);
        }
    }

    private record PemBlock(String type, byte[] der) {
    }

    private static List<PemBlock> pemBlocks(String text) {
        List<PemBlock> blocks = new ArrayList<>();
        Matcher m = PEM_BLOCK.matcher(text);
        while (m.find()) {
            String body = m.group(2);
            // Encapsulated headers (Proc-Type, DEK-Info) mark a legacy encrypted key: keep the type, no body.
            if (body.contains(":")) {
                blocks.add(new PemBlock(m.group(1).equals("RSA PRIVATE KEY") || m.group(1).equals("EC PRIVATE KEY")
                        ? "ENCRYPTED PRIVATE KEY" : m.group(1), new byte[0]));
                continue;
            }
            blocks.add(new PemBlock(m.group(1), Base64.getMimeDecoder().decode(body)));
        }
        return blocks;
    }
}
