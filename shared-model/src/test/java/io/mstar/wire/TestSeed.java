package io.mstar.wire;

import java.util.Random;

/**
 * Seeds for randomized tests: random per run, printed so a failure can be replayed with
 * {@code -Dmstar.test.seed=<seed>}.
 */
final class TestSeed {

    private TestSeed() {
    }

    static long seed(String test) {
        String override = System.getProperty("mstar.test.seed");
        long seed = override != null && !override.isBlank() ? Long.parseLong(override.trim()) : new Random().nextLong();
        System.out.println("[seed] " + test + " runs with -Dmstar.test.seed=" + seed);
        return seed;
    }
}
