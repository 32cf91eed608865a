package io.mstar.tensor.transport;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Read grants: what a reader presents with every HTTP tensor read, and what the tensor server checks before it
 * touches its store (docs/security.md). A grant names one tensor, the reader and an expiry, and is signed with the
 * deployment's data-plane secret (HMAC-SHA256), so the secret itself never crosses the network and a grant that leaks
 * (a log, a captured header) reads that one tensor for a short while. The reader mints it just before the read: every
 * process of a deployment holds the same secret, so a grant minted by the producer would prove nothing more.
 *
 * <p>Wire form, in the {@value #HEADER} header: {@code v1:<reader>:<expiry epoch ms>:<base64url signature>}, the
 * signature over {@code mstar-read-grant/v1}, the uuid, the reader and the expiry. The check compares signatures in
 * constant time and refuses an expiry further ahead than the longest lifetime a reader mints (a grant made to last).
 *
 * <p>Thread-safe: each thread signs with its own {@link Mac}.
 */
public final class ReadGrants {

    /** The request header a grant travels in. */
    public static final String HEADER = "Mstar-Read-Grant";

    /** Why a read was refused: the {@code reason} of {@code mstar_<role>_tensor_reads_rejected_total}. */
    public enum Rejection {
        /** No grant presented. */
        MISSING,
        /** Not a grant of this version's form, or a reader name that is not an entity id. */
        MALFORMED,
        /** Past its expiry, or valid for longer than any reader mints. */
        EXPIRED,
        /** The signature does not match: another uuid, another reader, a changed expiry, another secret. */
        BAD_SIGNATURE;

        /** The tag value. */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The shortest secret accepted: 32 bytes, HMAC-SHA256's block strength. */
    public static final int MIN_SECRET_BYTES = 32;

    private static final String VERSION = "v1";
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] DOMAIN = "mstar-read-grant/v1".getBytes(StandardCharsets.US_ASCII);
    /** Entity ids as the control plane writes them: {@code conductor}, {@code worker-<n>}. */
    private static final Pattern READER = Pattern.compile("[a-z][a-z0-9-]{0,63}");
    /** Clock skew between hosts that a check forgives, both ways. */
    private static final long SKEW_MILLIS = 30_000;

    private final SecretKeySpec key;
    private final long lifetimeMillis;
    private final Clock clock;
    private final ThreadLocal<Mac> macs;
    private final boolean enabled;

    private ReadGrants(byte[] secret, Duration lifetime, Clock clock, boolean enabled) {
        this.enabled = enabled;
        this.key = enabled ? new SecretKeySpec(secret, ALGORITHM) : null;
        this.lifetimeMillis = lifetime.toMillis();
        this.clock = clock;
        this.macs = ThreadLocal.withInitial(this::newMac);
    }

    /**
     * Grants signed with {@code secret}, each valid for {@code lifetime} after it is minted.
     *
     * @throws IllegalArgumentException for a secret shorter than {@value #MIN_SECRET_BYTES} bytes or a lifetime that
     *         is not positive
     */
    public static ReadGrants signedWith(byte[] secret, Duration lifetime, Clock clock) {
        Objects.requireNonNull(secret, "secret");
        if (secret.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("the data-plane secret must be at least " + MIN_SECRET_BYTES
                    + " bytes, was " + secret.length);
        }
        if (lifetime.isNegative() || lifetime.isZero()) {
            throw new IllegalArgumentException("a grant's lifetime must be positive, was " + lifetime);
        }
        return new ReadGrants(secret.clone(), lifetime, Objects.requireNonNull(clock, "clock"), true);
    }

    /** No grants: readers present none and servers check none (a trusted network; docs/security.md). */
    public static ReadGrants disabled() {
        return new ReadGrants(null, Duration.ofSeconds(1), Clock.systemUTC(), false);
    }

    /** Whether grants are minted and checked. */
    public boolean enabled() {
        return enabled;
    }

    /** A grant for {@code reader} to read tensor {@code uuid}; null when grants are disabled. */
    public String issue(long uuid, String reader) {
        if (!enabled) {
            return null;
        }
        if (!READER.matcher(reader).matches()) {
            throw new IllegalArgumentException("not an entity id: " + reader);
        }
        long expiry = clock.millis() + lifetimeMillis;
        return VERSION + ":" + reader + ":" + expiry + ":"
                + Base64.getUrlEncoder().withoutPadding().encodeToString(sign(uuid, reader, expiry));
    }

    /** Why {@code grant} does not let its holder read {@code uuid}, or null when it does (always when disabled). */
    public Rejection check(String grant, long uuid) {
        if (!enabled) {
            return null;
        }
        if (grant == null || grant.isEmpty()) {
            return Rejection.MISSING;
        }
        String[] parts = grant.split(":", -1);
        if (parts.length != 4 || !VERSION.equals(parts[0]) || !READER.matcher(parts[1]).matches()) {
            return Rejection.MALFORMED;
        }
        long expiry;
        byte[] presented;
        try {
            expiry = Long.parseLong(parts[2]);
            presented = Base64.getUrlDecoder().decode(parts[3]);
        } catch (IllegalArgumentException e) {
            return Rejection.MALFORMED;
        }
        long now = clock.millis();
        if (expiry < now - SKEW_MILLIS || expiry > now + lifetimeMillis + SKEW_MILLIS) {
            return Rejection.EXPIRED;
        }
        return MessageDigest.isEqual(presented, sign(uuid, parts[1], expiry)) ? null : Rejection.BAD_SIGNATURE;
    }

    private byte[] sign(long uuid, String reader, long expiry) {
        Mac mac = macs.get();
        mac.update(DOMAIN);
        mac.update(separated(Long.toString(uuid)));
        mac.update(separated(reader));
        return mac.doFinal(separated(Long.toString(expiry)));
    }

    private static byte[] separated(String field) {
        return ("\n" + field).getBytes(StandardCharsets.US_ASCII);
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available", e);
        }
    }
}
