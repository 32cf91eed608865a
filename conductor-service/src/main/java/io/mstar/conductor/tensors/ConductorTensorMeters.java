package io.mstar.conductor.tensors;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.ServedTensors;

/**
 * The conductor's tensor meters: the client inputs it still holds and the host bytes under them. An idle
 * conductor reports zero for both; anything else is a leak, which is what the e2e tests and the leak alert
 * look for. Both read thread-safe views (the served table, the device's stats), never the loop's store.
 * <ul>
 *   <li>{@code mstar.conductor.tensors.live}: inputs published and not yet freed (a freed one pinned by a
 *   read counts until the read ends);</li>
 *   <li>{@code mstar.conductor.device.memory.used} (bytes): host memory of those tensors.</li>
 * </ul>
 */
public final class ConductorTensorMeters implements MeterBinder {

    public static final String TENSORS_LIVE = "mstar.conductor.tensors.live";
    public static final String DEVICE_MEMORY_USED = "mstar.conductor.device.memory.used";

    private final ServedTensors served;
    private final HostDevice device;

    public ConductorTensorMeters(ServedTensors served, HostDevice device) {
        this.served = served;
        this.device = device;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(TENSORS_LIVE, served, ServedTensors::live)
                .description("Input tensors the conductor holds (published, or freed while a read pins them)")
                .register(registry);
        Gauge.builder(DEVICE_MEMORY_USED, device, d -> d.stats().bytesInUse()).baseUnit("bytes")
                .description("Host bytes under the conductor's tensors")
                .register(registry);
    }
}
