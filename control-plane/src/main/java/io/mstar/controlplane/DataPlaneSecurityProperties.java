package io.mstar.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.tensor.transport.ReadGrants;

/**
 * How tensor reads between the processes of a deployment are authenticated and, optionally, encrypted
 * ({@code mstar.data-plane.*}; docs/security.md). Every process of a deployment must hold the same secret and use the
 * same TLS settings.
 *
 * @param authentication {@code grants} (the default): every HTTP tensor read carries a grant signed with the secret
 *                       and servers refuse reads without a valid one; {@code none}: no grants, for a network where
 *                       every peer is trusted
 * @param secretFile     file holding the data-plane secret (at least 32 bytes; surrounding white space is ignored):
 *                       the Secret mounted by the Helm chart, {@code .mstar/data-plane-secret} in the local stack.
 *                       Required with {@code grants} unless {@code secret} is set
 * @param secret         the secret itself, for tests and development only (a file keeps it out of process listings);
 *                       used when {@code secretFile} is empty
 * @param grantLifetime  how long a grant stays valid after the reader mints it (default 60 s): it is minted just
 *                       before the read, so this covers the read's queueing and the clock skew between hosts
 * @param tls            TLS on the data port ({@code mstar.data-plane.tls.*}), off by default
 */
@ConfigurationProperties("mstar.data-plane")
public record DataPlaneSecurityProperties(@DefaultValue("grants") Authentication authentication,
        @DefaultValue("") String secretFile, @DefaultValue("") String secret,
        @DefaultValue("60s") Duration grantLifetime, @DefaultValue Tls tls) {

    private static final String TLS_PREFIX = "mstar.data-plane.tls.";

    @ConstructorBinding
    public DataPlaneSecurityProperties {
        tls = tls == null ? Tls.OFF : tls;
    }

    /** Without TLS on the data port. */
    public DataPlaneSecurityProperties(Authentication authentication, String secretFile, String secret,
            Duration grantLifetime) {
        this(authentication, secretFile, secret, grantLifetime, Tls.OFF);
    }

    /**
     * TLS on the data port ({@code mstar.data-plane.tls.*}; docs/security.md#tls-on-the-data-port). Every process of a
     * deployment must use the same settings: a reader with TLS refuses a plain-text server, and a server with TLS
     * serves no plain-text reader.
     *
     * @param enabled         serve and read tensors over HTTPS only (default false: plain HTTP, as the local stack on
     *                        loopback)
     * @param certificateFile PEM certificate chain every tensor server presents, leaf first ({@code tls.crt} of a
     *                        {@code kubernetes.io/tls} Secret); required when enabled
     * @param privateKeyFile  the leaf's unencrypted PEM private key ({@code tls.key}): PKCS#8, or PKCS#1 for RSA;
     *                        required when enabled
     * @param trustFile       PEM CA bundle readers trust ({@code ca.crt}); empty (the default): the certificate file
     *                        itself, for a self-signed deployment certificate
     * @param serverName      the DNS name readers verify every server's certificate against, instead of the host in
     *                        {@code source_session_id}: one certificate for a deployment whose pods are reached by IP.
     *                        Empty (the default): the host the reader connects to must be in the certificate
     */
    public record Tls(@DefaultValue("false") boolean enabled, @DefaultValue("") String certificateFile,
            @DefaultValue("") String privateKeyFile, @DefaultValue("") String trustFile,
            @DefaultValue("") String serverName) {

        static final Tls OFF = new Tls(false, "", "", "", "");

        public Tls {
            certificateFile = certificateFile == null ? "" : certificateFile.trim();
            privateKeyFile = privateKeyFile == null ? "" : privateKeyFile.trim();
            trustFile = trustFile == null ? "" : trustFile.trim();
            serverName = serverName == null ? "" : serverName.trim();
        }
    }

    /**
     * The data port's TLS, its files read and checked once: {@link DataPlaneTls#disabled()} unless
     * {@code mstar.data-plane.tls.enabled}.
     *
     * @throws IllegalStateException naming the property, when TLS is on and a file is not set, missing, unreadable,
     *         not PEM, a key that is not PKCS#8 or not the certificate's, an expired certificate: the service does not
     *         start
     */
    public DataPlaneTls dataPlaneTls() {
        if (!tls.enabled()) {
            return DataPlaneTls.disabled();
        }
        if (tls.certificateFile().isEmpty() || tls.privateKeyFile().isEmpty()) {
            throw new IllegalStateException("TLS on the data port is on (" + TLS_PREFIX + "enabled=true) but "
                    + TLS_PREFIX + (tls.certificateFile().isEmpty() ? "certificate-file" : "private-key-file")
                    + " is not set: give the PEM certificate (" + TLS_PREFIX + "certificate-file, tls.crt) and its "
                    + "PKCS#8 key (" + TLS_PREFIX + "private-key-file, tls.key), or set " + TLS_PREFIX
                    + "enabled=false on every process of the deployment");
        }
        Path certificate = Path.of(tls.certificateFile());
        Path key = Path.of(tls.privateKeyFile());
        Path trust = tls.trustFile().isEmpty() ? certificate : Path.of(tls.trustFile());
        try {
            return DataPlaneTls.fromPem(certificate, key, trust, tls.serverName());
        } catch (DataPlaneTls.InvalidFileException e) {
            String property = switch (e.part()) {
                case CERTIFICATE -> "certificate-file";
                case PRIVATE_KEY -> "private-key-file";
                case TRUST -> tls.trustFile().isEmpty() ? "trust-file (not set: the certificate-file)" : "trust-file";
            };
            throw new IllegalStateException(TLS_PREFIX + property + " " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(TLS_PREFIX + "server-name " + tls.serverName() + ": " + e.getMessage()
                    + " (the DNS name in the data-plane certificate that readers verify)", e);
        }
    }

    /** The modes of {@code mstar.data-plane.authentication}. */
    public enum Authentication {
        GRANTS,
        NONE
    }

    /**
     * The deployment's read grants.
     *
     * @throws IllegalStateException with {@code grants} and no secret, or one shorter than 32 bytes, or a secret file
     *         that cannot be read: the service does not start
     */
    public ReadGrants readGrants() {
        if (authentication == Authentication.NONE) {
            return ReadGrants.disabled();
        }
        String value;
        if (!secretFile.isBlank()) {
            try {
                value = Files.readString(Path.of(secretFile.trim()), StandardCharsets.UTF_8).strip();
            } catch (IOException | UncheckedIOException e) {
                throw new IllegalStateException("mstar.data-plane.secret-file " + secretFile + " cannot be read: " + e, e);
            }
        } else if (!secret.isBlank()) {
            value = secret.strip();
        } else {
            throw new IllegalStateException("tensor reads are authenticated (mstar.data-plane.authentication=grants) "
                    + "but no secret is set: give mstar.data-plane.secret-file (every process of the deployment the "
                    + "same), or set mstar.data-plane.authentication=none on a trusted network");
        }
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < ReadGrants.MIN_SECRET_BYTES) {
            throw new IllegalStateException("the data-plane secret must be at least " + ReadGrants.MIN_SECRET_BYTES
                    + " bytes, was " + bytes.length);
        }
        return ReadGrants.signedWith(bytes, grantLifetime, Clock.systemUTC());
    }
}
