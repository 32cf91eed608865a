package io.mstar.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The seeds of randomized tests, in one place so every module picks and prints them the same way. A run uses
 * {@code -Dmstar.test.seed=N} when it is given, else a fresh random seed; either way it prints
 * {@code [seed] <test> runs with -Dmstar.test.seed=N}, so a failure seen once can be run again exactly.
 */
public final class Seeds {

    /** The system property that fixes the seed of every randomized test in a run. */
    public static final String PROPERTY = "mstar.test.seed";

    private Seeds() {
    }

    /** The seed {@code test} runs with: the property's value, else a fresh random one; printed. */
    public static long of(String test) {
        Long override = override();
        long seed = override != null ? override : new Random().nextLong();
        print(test, seed);
        return seed;
    }

    /**
     * The seeds of a test that always runs some fixed seeds and one fresh one: {@code fixed} then a random seed, or
     * only the property's value when it is given. Each is printed.
     */
    public static List<Long> withFixed(String test, long... fixed) {
        Long override = override();
        List<Long> seeds = new ArrayList<>();
        if (override != null) {
            seeds.add(override);
        } else {
            for (long s : fixed) {
                seeds.add(s);
            }
            seeds.add(new Random().nextLong());
        }
        seeds.forEach(s -> print(test, s));
        return List.copyOf(seeds);
    }

    private static Long override() {
        String value = System.getProperty(PROPERTY);
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("-D" + PROPERTY + " must be a long, not '" + value + "'", e);
        }
    }

    private static void print(String test, long seed) {
        System.out.println("[seed] " + test + " runs with -D" + PROPERTY + "=" + seed);
    }
}
