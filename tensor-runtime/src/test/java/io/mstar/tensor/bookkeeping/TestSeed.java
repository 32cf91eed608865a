package io.mstar.tensor.bookkeeping;

/** Seeds for randomized tests: {@code -Dmstar.test.seed=<seed>} replays one. */
final class TestSeed {

    private TestSeed() {
    }

    /** The override when given, else {@code fallback}; printed either way so a failure can be replayed. */
    static long seed(String test, long fallback) {
        String override = System.getProperty("mstar.test.seed");
        long seed = override != null && !override.isBlank() ? Long.parseLong(override.trim()) : fallback;
        System.out.println("[seed] " + test + " runs with -Dmstar.test.seed=" + seed);
        return seed;
    }
}
