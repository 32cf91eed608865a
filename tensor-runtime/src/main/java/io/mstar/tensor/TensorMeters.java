package io.mstar.tensor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.metrics.MeterDeclaration;
import io.mstar.metrics.RegisteredMeters;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import io.mstar.tensor.device.Device;

/**
 * The worker's tensor meters, declared once here (docs/architecture.md#meters-declared-once-per-role). Dotted names
 * with base units; Prometheus renders {@code mstar.worker.device.memory.used} (bytes) as
 * {@code mstar_worker_device_memory_used_bytes} and the counters with {@code _total}. Tags are bounded: {@code state}
 * is a {@link TensorState}, {@code device} one of the devices named at construction, {@code reason} a
 * {@link TensorStoreException.Reason} – never a request id or a uuid.
 *
 * <p>Every meter reads a value published elsewhere – the store's latest {@link TensorStoreSnapshot} or a
 * device's thread-safe {@link Device#stats()} – so a scrape never touches the engine loop's state.
 * {@link #close()} removes every meter this instance registered.
 */
public final class TensorMeters implements AutoCloseable {

    static final String PREFIX = "mstar.worker.";
    public static final String TAG_STATE = "state";
    public static final String TAG_DEVICE = "device";
    public static final String TAG_REASON = "reason";

    /** Every tensor meter: name after {@code mstar.worker.}, type, base unit, tag, description. */
    public enum Definition {
        TENSORS_LIVE("tensors.live", Meter.Type.GAUGE, null, TAG_STATE,
                "Tensors held by the tensor store, by state (owned, awaiting_ack, persisted)"),
        TENSOR_MEMORY("tensor.memory", Meter.Type.GAUGE, "bytes", TAG_DEVICE,
                "Bytes of the device buffers the tensor store holds, by device"),
        DEVICE_MEMORY_USED("device.memory.used", Meter.Type.GAUGE, "bytes", TAG_DEVICE,
                "Bytes of live buffers on the device (tensors, kernel scratch, everything allocated)"),
        DEVICE_ALLOCATIONS("device.allocations", Meter.Type.COUNTER, null, TAG_DEVICE,
                "Buffers allocated on the device"),
        DEVICE_FREES("device.frees", Meter.Type.COUNTER, null, TAG_DEVICE,
                "Buffers freed on the device"),
        TENSOR_ERRORS("tensor.errors", Meter.Type.COUNTER, null, TAG_REASON,
                "Refused tensor store and bookkeeping operations (unknown uuid, duplicate uuid, bad argument)");

        private final MeterDeclaration declaration;

        Definition(String suffix, Meter.Type type, String baseUnit, String tagKey, String description) {
            this.declaration = new MeterDeclaration(PREFIX + suffix, type, baseUnit, List.of(tagKey), description);
        }

        public MeterDeclaration declaration() {
            return declaration;
        }
    }

    private final MeterRegistry registry;
    private final RegisteredMeters registered;
    private final List<Supplier<Number>> counterSources = new ArrayList<>();

    /**
     * Registers every series at once (at zero where nothing happened yet), so dashboards and {@code rate()} see
     * them from the start.
     *
     * @param snapshot the store's latest published snapshot; called from scraping threads
     * @param devices  the devices to report; this class does not close them
     */
    public TensorMeters(MeterRegistry registry, Supplier<TensorStoreSnapshot> snapshot, List<? extends Device> devices) {
        this.registry = registry;
        this.registered = new RegisteredMeters(registry);
        for (TensorState state : TensorState.values()) {
            registered.add(gauge(Definition.TENSORS_LIVE, state.value(), () -> snapshot.get().count(state)));
        }
        for (Device device : devices) {
            String name = device.name();
            registered.add(gauge(Definition.TENSOR_MEMORY, name,
                    () -> snapshot.get().bytesByDevice().getOrDefault(name, 0L)));
            registered.add(gauge(Definition.DEVICE_MEMORY_USED, name, () -> device.stats().bytesInUse()));
            registered.add(counter(Definition.DEVICE_ALLOCATIONS, name, () -> device.stats().allocations()));
            registered.add(counter(Definition.DEVICE_FREES, name, () -> device.stats().frees()));
        }
        for (TensorStoreException.Reason reason : TensorStoreException.Reason.values()) {
            registered.add(counter(Definition.TENSOR_ERRORS, reason.name().toLowerCase(Locale.ROOT),
                    () -> snapshot.get().error(reason)));
        }
    }

    /** The meters this instance registered (for tests and the scrape-vs-declaration check). */
    public List<Meter> meters() {
        return registered.meters();
    }

    @Override
    public void close() {
        registered.close();
    }

    private Gauge gauge(Definition d, String tagValue, Supplier<Number> value) {
        return d.declaration().gauge(value, tagValue).strongReference(true).register(registry);
    }

    private FunctionCounter counter(Definition d, String tagValue, Supplier<Number> value) {
        // A function counter holds its state object weakly and has no strongReference option: without this
        // list the supplier is collectable and the counter silently reads 0 after the next GC.
        counterSources.add(value);
        return d.declaration().functionCounter(value, v -> v.get().doubleValue(), tagValue).register(registry);
    }
}
