package io.mstar.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The leak check every test ends with: each counter of what a component holds (live tensors, records, device
 * bytes, buffers, pages...) must be back at its baseline. All counters are read before anything is asserted, so a
 * failure names every leak at once rather than the first.
 *
 * <pre>{@code
 * Baseline.of("worker-0")
 *         .zero("live tensors", store.liveTensorCount())
 *         .equal("device bytes", device.bytesInUse(), kvPoolBytes)
 *         .check();
 * }</pre>
 */
public final class Baseline {

    private final String owner;
    private final Map<String, long[]> counters = new LinkedHashMap<>();

    private Baseline(String owner) {
        this.owner = owner;
    }

    /** A check of what {@code owner} (a process, worker or fixture, for the message) still holds. */
    public static Baseline of(String owner) {
        return new Baseline(owner);
    }

    /** {@code what} must be 0. */
    public Baseline zero(String what, long value) {
        return equal(what, value, 0);
    }

    /** {@code what} must be back at {@code baseline} (what the component holds for its whole life). */
    public Baseline equal(String what, long value, long baseline) {
        if (counters.putIfAbsent(what, new long[] {value, baseline}) != null) {
            throw new IllegalArgumentException(owner + ": '" + what + "' checked twice");
        }
        return this;
    }

    /** The counters off their baseline, as {@code what=value (baseline b)}; empty when nothing leaked. */
    public List<String> leaks() {
        List<String> leaks = new ArrayList<>();
        counters.forEach((what, v) -> {
            if (v[0] != v[1]) {
                leaks.add(what + "=" + v[0] + " (baseline " + v[1] + ")");
            }
        });
        return leaks;
    }

    /** Fails with every counter off its baseline. */
    public void check() {
        List<String> leaks = leaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(owner + " is not at its baseline: " + String.join(", ", leaks));
        }
    }
}
