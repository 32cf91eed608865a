package io.mstar.messaging;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * A random identity drawn once per process start and sent with every record ({@code mstar-incarnation}), so
 * a receiver can tell that a peer restarted and lost every request it held
 * (docs/architecture.md#restarts-and-ordering). 64 random bits: two starts colliding is negligible.
 */
public record Incarnation(String value) {

    private static final SecureRandom RANDOM = new SecureRandom();

    public Incarnation {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("incarnation must not be blank");
        }
    }

    /** A fresh incarnation; call once per process start. */
    public static Incarnation random() {
        return new Incarnation(HexFormat.of().toHexDigits(RANDOM.nextLong()));
    }

    @Override
    public String toString() {
        return value;
    }
}
