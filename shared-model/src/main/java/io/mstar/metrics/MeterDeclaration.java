package io.mstar.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * One meter as a service declares it (docs/architecture.md#meters-declared-once-per-role): dotted name, type, base
 * unit, the keys of its bounded tags and its description. Each meter class lists its declarations once and builds every
 * meter from them, so a name, unit, tag key or description is written in one place and a test can derive what a scrape
 * must hold.
 *
 * <p>The builders take one tag value per declared key, in order, and carry the description and base unit; the
 * caller adds what is particular to the meter (histogram bounds, strong references) and registers it.
 *
 * @param baseUnit the base unit ({@code seconds} for timers), or null for counts
 * @param tagKeys  the tag keys every meter of this declaration carries, in order; empty when untagged
 */
public record MeterDeclaration(String name, Meter.Type type, String baseUnit, List<String> tagKeys, String description) {

    public MeterDeclaration {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        tagKeys = List.copyOf(tagKeys);
        Objects.requireNonNull(description, "description");
    }

    /** The same meter named {@code prefix.name}: for declarations shared by several roles. */
    public MeterDeclaration under(String prefix) {
        return new MeterDeclaration(prefix + "." + name, type, baseUnit, tagKeys, description);
    }

    public Counter.Builder counter(String... tagValues) {
        expect(Meter.Type.COUNTER);
        return Counter.builder(name).description(description).baseUnit(baseUnit).tags(tags(tagValues));
    }

    /** A counter that reads {@code value} of {@code source} at each scrape (the registry holds it weakly). */
    public <T> FunctionCounter.Builder<T> functionCounter(T source, ToDoubleFunction<T> value, String... tagValues) {
        expect(Meter.Type.COUNTER);
        return FunctionCounter.builder(name, source, value).description(description).baseUnit(baseUnit)
                .tags(tags(tagValues));
    }

    public <T> Gauge.Builder<T> gauge(T source, ToDoubleFunction<T> value, String... tagValues) {
        expect(Meter.Type.GAUGE);
        return Gauge.builder(name, source, value).description(description).baseUnit(baseUnit).tags(tags(tagValues));
    }

    public Gauge.Builder<Supplier<Number>> gauge(Supplier<Number> value, String... tagValues) {
        expect(Meter.Type.GAUGE);
        return Gauge.builder(name, value).description(description).baseUnit(baseUnit).tags(tags(tagValues));
    }

    /** A timer; Micrometer records it in the registry's base time unit, so the declared unit is not set here. */
    public Timer.Builder timer(String... tagValues) {
        expect(Meter.Type.TIMER);
        return Timer.builder(name).description(description).tags(tags(tagValues));
    }

    public DistributionSummary.Builder summary(String... tagValues) {
        expect(Meter.Type.DISTRIBUTION_SUMMARY);
        return DistributionSummary.builder(name).description(description).baseUnit(baseUnit).tags(tags(tagValues));
    }

    /**
     * The name Prometheus renders: dots to underscores, then the base unit unless the name already ends with it,
     * then {@code _total} for counters.
     */
    public String prometheusName() {
        String rendered = name.replace('.', '_');
        if (baseUnit != null && !rendered.endsWith("_" + baseUnit)) {
            rendered += "_" + baseUnit;
        }
        return type == Meter.Type.COUNTER ? rendered + "_total" : rendered;
    }

    /** The sample every meter of this declaration shows in a scrape: the value, or a timer's or summary's count. */
    public String scrapedSample() {
        return type == Meter.Type.TIMER || type == Meter.Type.DISTRIBUTION_SUMMARY
                ? prometheusName() + "_count" : prometheusName();
    }

    private Tags tags(String... values) {
        if (values.length != tagKeys.size()) {
            throw new IllegalArgumentException(name + " is tagged by " + tagKeys + ", given " + values.length
                    + " value(s)");
        }
        List<String> pairs = new ArrayList<>(2 * values.length);
        for (int i = 0; i < values.length; i++) {
            pairs.add(tagKeys.get(i));
            pairs.add(values[i]);
        }
        return Tags.of(pairs.toArray(String[]::new));
    }

    private void expect(Meter.Type builder) {
        if (type != builder) {
            throw new IllegalStateException(name + " is declared a " + type + ", not a " + builder);
        }
    }
}
