package io.mstar.metrics;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters one component registered, removed from the registry together when it closes, so a closed component
 * leaves no series behind. Thread-safe: meters registered on first use may come from any recording thread. Adding
 * a meter twice (Micrometer hands back the registered meter for the same id) keeps one entry.
 */
public final class RegisteredMeters implements AutoCloseable {

    private final MeterRegistry registry;
    private final Set<Meter> meters = new LinkedHashSet<>();

    public RegisteredMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Remembers {@code meter} for {@link #close()} and returns it. */
    public synchronized <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    /** The meters added so far, in the order first added. */
    public synchronized List<Meter> meters() {
        return List.copyOf(meters);
    }

    /** Removes every meter added from the registry. */
    @Override
    public synchronized void close() {
        meters.forEach(registry::remove);
        meters.clear();
    }
}
