package io.mstar.tensor.transport;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mstar.metrics.MeterDeclaration;
import io.mstar.metrics.RegisteredMeters;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reader's meters, declared once per role ({@code worker}, {@code conductor}), tagged only by
 * {@code transport} ({@code shm}, {@code http}) and, for failures, {@code reason} (an enum). Dotted
 * names with base units; the Prometheus convention renders them as listed on each constant.
 */
final class TransportMeters implements AutoCloseable {

    /** The declaration: name suffix after {@code mstar.<role>.}, type, unit, tags, description. */
    enum Declared {
        /** {@code mstar_<role>_tensor_transfer_bytes_total} */
        TRANSFER_BYTES("tensor.transfer.bytes", Meter.Type.COUNTER, "bytes", List.of(TAG_TRANSPORT),
                "Tensor bytes read from producers"),
        /** {@code mstar_<role>_tensor_transfer_seconds} (count, sum, max) */
        TRANSFER_TIME("tensor.transfer", Meter.Type.TIMER, "seconds", List.of(TAG_TRANSPORT),
                "Time from read start to bytes landed"),
        /** {@code mstar_<role>_tensor_reads_in_flight} */
        READS_IN_FLIGHT("tensor.reads.in.flight", Meter.Type.GAUGE, null, List.of(TAG_TRANSPORT),
                "Tensor reads started and not yet finished"),
        /** {@code mstar_<role>_tensor_read_failures_total} */
        READ_FAILURES("tensor.read.failures", Meter.Type.COUNTER, null, List.of(TAG_TRANSPORT, "reason"),
                "Tensor reads that failed, by reason");

        private final MeterDeclaration declaration;

        Declared(String suffix, Meter.Type type, String unit, List<String> tags, String description) {
            this.declaration = new MeterDeclaration(suffix, type, unit, tags, description);
        }

        MeterDeclaration declaration(String role) {
            return declaration.under("mstar." + role);
        }
    }

    private static final String TAG_TRANSPORT = "transport";

    private final MeterRegistry registry;
    private final String role;
    private final RegisteredMeters meters;
    private final Map<Transport, Counter> bytes = new EnumMap<>(Transport.class);
    private final Map<Transport, Timer> time = new EnumMap<>(Transport.class);
    private final Map<Transport, AtomicInteger> inFlight = new EnumMap<>(Transport.class);

    TransportMeters(MeterRegistry registry, String role) {
        this.registry = registry;
        this.role = role;
        this.meters = new RegisteredMeters(registry);
        for (Transport t : Transport.values()) {
            Counter c = Declared.TRANSFER_BYTES.declaration(role).counter(t.tag()).register(registry);
            Timer timer = Declared.TRANSFER_TIME.declaration(role).timer(t.tag()).register(registry);
            AtomicInteger n = new AtomicInteger();
            Gauge g = Declared.READS_IN_FLIGHT.declaration(role).gauge(n, AtomicInteger::get, t.tag()).register(registry);
            bytes.put(t, c);
            time.put(t, timer);
            inFlight.put(t, n);
            meters.add(c);
            meters.add(timer);
            meters.add(g);
        }
    }

    void started(Transport t) {
        inFlight.get(t).incrementAndGet();
    }

    void landed(Transport t, long nbytes, long nanos) {
        inFlight.get(t).decrementAndGet();
        bytes.get(t).increment(nbytes);
        time.get(t).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    void failed(Transport t, TensorTransportException.Reason reason) {
        inFlight.get(t).decrementAndGet();
        Counter c = Declared.READ_FAILURES.declaration(role)
                .counter(t.tag(), reason.name().toLowerCase(java.util.Locale.ROOT)).register(registry);
        meters.add(c).increment();
    }

    int inFlight(Transport t) {
        return inFlight.get(t).get();
    }

    /** Removes every meter this instance registered. */
    @Override
    public void close() {
        meters.close();
    }
}
