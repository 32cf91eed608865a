package io.mstar.metrics;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

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
    private final Map<Object, Meter> byKey = new HashMap<>();

    public RegisteredMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Remembers {@code meter} for {@link #close()} and returns it. */
    public synchronized <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    /**
     * The meter kept under {@code key} (say the meter's name and its tag values), registered by {@code register} and
     * added on first use: a map lookup per recorded value instead of a builder and a registry lookup.
     */
    @SuppressWarnings("unchecked")
    public synchronized <M extends Meter> M computeIfAbsent(Object key, Supplier<M> register) {
        return (M) byKey.computeIfAbsent(key, k -> add(register.get()));
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
        byKey.clear();
    }
}
