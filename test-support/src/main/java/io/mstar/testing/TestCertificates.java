package io.mstar.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real certificates for tests, made at test time with the JDK's {@code keytool} and written as the PEM files a
 * {@code kubernetes.io/tls} Secret holds: the certificate ({@code -----BEGIN CERTIFICATE-----}) and the PKCS#8 key
 * ({@code -----BEGIN PRIVATE KEY-----}), base64 with MIME line breaks. EC P-256, valid two days.
 */
public final class TestCertificates {

    /** The SAN of a certificate for this host's loopback names. */
    public static final String LOOPBACK = "ip:127.0.0.1,dns:localhost";

    private static final String PASSWORD = "test-only-store-password";

    /** A certificate and its key as PEM files. */
    public record Pem(Path certificate, Path privateKey) {
    }

    private TestCertificates() {
    }

    /** A self-signed certificate {@code CN=<name>} for {@code san} ({@code ip:...,dns:...}) in {@code dir}. */
    public static Pem selfSigned(Path dir, String name, String san) {
        Path store = dir.resolve(name + ".p12");
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-ext", "SAN=" + san, "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        return writePem(dir, name, store, null, null);
    }

    /**
     * A self-signed RSA certificate whose key file is PKCS#1 ({@code -----BEGIN RSA PRIVATE KEY-----}), as Helm's
     * {@code genSelfSignedCert} and cert-manager's default encoding write RSA keys.
     */
    public static Pem selfSignedRsaPkcs1(Path dir, String name, String san) {
        Path store = dir.resolve(name + ".p12");
        keytool("-genkeypair", "-alias", name, "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
                "-ext", "SAN=" + san, "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        Pem pem = writePem(dir, name, store, null, null);
        try {
            String pkcs8 = Files.readString(pem.privateKey(), StandardCharsets.US_ASCII);
            byte[] der = Base64.getMimeDecoder().decode(pkcs8.replaceAll("-----[A-Z ]+-----", ""));
            Files.writeString(pem.privateKey(), pem("RSA PRIVATE KEY", pkcs1Of(der)), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return pem;
    }

    /** The RSAPrivateKey inside a PKCS#8 PrivateKeyInfo: SEQUENCE { INTEGER, SEQUENCE, OCTET STRING key }. */
    private static byte[] pkcs1Of(byte[] pkcs8) {
        int[] at = {0};
        header(pkcs8, at, 0x30);
        skip(pkcs8, at, 0x02);
        skip(pkcs8, at, 0x30);
        int length = header(pkcs8, at, 0x04);
        return java.util.Arrays.copyOfRange(pkcs8, at[0], at[0] + length);
    }

    private static int header(byte[] der, int[] at, int tag) {
        if ((der[at[0]++] & 0xff) != tag) {
            throw new IllegalArgumentException("unexpected DER tag at " + (at[0] - 1));
        }
        int first = der[at[0]++] & 0xff;
        if (first < 0x80) {
            return first;
        }
        int length = 0;
        for (int i = 0; i < (first & 0x7f); i++) {
            length = (length << 8) | (der[at[0]++] & 0xff);
        }
        return length;
    }

    private static void skip(byte[] der, int[] at, int tag) {
        int length = header(der, at, tag); // before the +=: it moves at[0] past the header
        at[0] += length;
    }

    /** A self-signed certificate for {@code san} that expired yesterday. */
    public static Pem expired(Path dir, String name, String san) {
        Path store = dir.resolve(name + ".p12");
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-ext", "SAN=" + san, "-startdate", "-3d", "-validity", "2", "-storetype", "PKCS12", "-keystore",
                store.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
        return writePem(dir, name, store, null, null);
    }

    /** A CA certificate {@code CN=<name>} (basic constraints CA) with its key, self-signed. */
    public static Pem authority(Path dir, String name) {
        Path store = dir.resolve(name + ".p12");
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-ext", "bc:c", "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        return writePem(dir, name, store, null, null);
    }

    /**
     * A certificate {@code CN=<name>} for {@code san} signed by {@code authority} (made by {@link #authority} in the
     * same {@code dir}); its file holds the leaf, then the CA, as cert-manager writes {@code tls.crt}.
     */
    public static Pem signedBy(Path dir, String authority, String name, String san) {
        Path store = dir.resolve(name + ".p12");
        Path request = dir.resolve(name + ".csr");
        Path signed = dir.resolve(name + ".signed.pem");
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", PASSWORD,
                "-keypass", PASSWORD);
        keytool("-certreq", "-alias", name, "-keystore", store.toString(), "-storepass", PASSWORD, "-file",
                request.toString());
        keytool("-gencert", "-alias", authority, "-keystore", dir.resolve(authority + ".p12").toString(),
                "-storepass", PASSWORD, "-infile", request.toString(), "-outfile", signed.toString(), "-rfc",
                "-ext", "SAN=" + san, "-validity", "2");
        return writePem(dir, name, store, signed, dir.resolve(authority + ".crt"));
    }

    private static Pem writePem(Path dir, String name, Path store, Path signedLeaf, Path authorityCertificate) {
        try {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store)) {
                keys.load(in, PASSWORD.toCharArray());
            }
            Key key = keys.getKey(name, PASSWORD.toCharArray());
            List<String> chain = new ArrayList<>();
            if (signedLeaf != null) {
                chain.add(Files.readString(signedLeaf, StandardCharsets.US_ASCII).strip() + "\n");
                chain.add(Files.readString(authorityCertificate, StandardCharsets.US_ASCII));
            } else {
                Certificate certificate = keys.getCertificate(name);
                chain.add(pem("CERTIFICATE", certificate.getEncoded()));
            }
            Path certificateFile = Files.writeString(dir.resolve(name + ".crt"), String.join("", chain),
                    StandardCharsets.US_ASCII);
            Path keyFile = Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", key.getEncoded()),
                    StandardCharsets.US_ASCII);
            return new Pem(certificateFile, keyFile);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot write the PEM files of " + name, e);
        }
    }

    /** {@code der} as a PEM block of {@code type}, base64 with MIME line breaks (76 columns, CRLF). */
    public static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\r\n" + Base64.getMimeEncoder().encodeToString(der) + "\r\n-----END " + type
                + "-----\r\n";
    }

    private static void keytool(String... arguments) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.add("-noprompt");
        command.addAll(List.of(arguments));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("keytool " + String.join(" ", arguments) + " failed: "
                        + new String(output, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run keytool", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running keytool", e);
        }
    }
}
