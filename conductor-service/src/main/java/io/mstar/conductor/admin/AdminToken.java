package io.mstar.conductor.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configured admin token, or none. Compares in constant time (over SHA-256 digests, so neither the token's
 * length nor a common prefix leaks through timing). Immutable.
 */
final class AdminToken {

    private static final Logger log = LoggerFactory.getLogger(AdminToken.class);

    /** At least this long, so a guessable token is refused at start-up rather than accepted. */
    static final int MIN_LENGTH = 16;

    private final byte[] digest;
    private final String whyDisabled;

    private AdminToken(byte[] digest, String whyDisabled) {
        this.digest = digest;
        this.whyDisabled = whyDisabled;
    }

    static AdminToken load(AdminProperties properties) {
        String token;
        String source;
        if (!properties.tokenFile().isBlank()) {
            source = "mstar.conductor.admin.token-file " + properties.tokenFile();
            try {
                token = Files.readString(Path.of(properties.tokenFile().trim()), StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                return disabled(source + " cannot be read: " + e);
            }
        } else if (!properties.token().isBlank()) {
            source = "mstar.conductor.admin.token";
            token = properties.token().trim();
        } else {
            return disabled("no admin token configured (set mstar.conductor.admin.token-file or "
                    + "MSTAR_CONDUCTOR_ADMIN_TOKEN)");
        }
        if (token.length() < MIN_LENGTH) {
            return disabled("the admin token from " + source + " is shorter than " + MIN_LENGTH + " characters");
        }
        log.info("admin API enabled; token from {}", source);
        return new AdminToken(sha256(token), null);
    }

    private static AdminToken disabled(String why) {
        log.warn("admin API disabled, every admin call is refused: {}", why);
        return new AdminToken(null, why);
    }

    boolean enabled() {
        return digest != null;
    }

    String whyDisabled() {
        return whyDisabled;
    }

    boolean matches(String presented) {
        return digest != null && MessageDigest.isEqual(digest, sha256(presented));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JVM", e);
        }
    }
}
