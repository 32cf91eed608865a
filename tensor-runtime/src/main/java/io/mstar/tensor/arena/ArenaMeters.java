package io.mstar.tensor.arena;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.metrics.RegisteredMeters;
import java.util.function.ToDoubleFunction;

/**
 * Arena occupancy as gauges, declared once per role. Prometheus names:
 * {@code mstar_<role>_arena_reserved_bytes} (tmpfs held: segments plus spill files),
 * {@code mstar_<role>_arena_used_bytes} (held by live slots), {@code mstar_<role>_arena_segments},
 * {@code mstar_<role>_arena_spilled_files}. Each scrape takes one {@link ShmArena#occupancy()} per
 * gauge (a short lock). Does not own the arena; {@link #close()} removes the gauges.
 */
public final class ArenaMeters implements AutoCloseable {

    private final MeterRegistry registry;
    private final RegisteredMeters meters;

    public ArenaMeters(ShmArena arena, MeterRegistry registry, String role) {
        this.registry = registry;
        this.meters = new RegisteredMeters(registry);
        gauge(arena, role, "arena.reserved", "bytes", "Shared memory held by the arena: segments and spill files",
                o -> o.reservedBytes());
        gauge(arena, role, "arena.used", "bytes", "Arena bytes held by live tensors", o -> o.usedBytes());
        gauge(arena, role, "arena.segments", null, "Arena segments created", o -> o.segments());
        gauge(arena, role, "arena.spilled.files", null, "Tensors spilled to their own file", o -> o.spilledFiles());
    }

    private void gauge(ShmArena arena, String role, String what, String unit, String description,
                       ToDoubleFunction<ArenaOccupancy> value) {
        meters.add(Gauge.builder("mstar." + role + "." + what, arena, a -> value.applyAsDouble(a.occupancy()))
                .baseUnit(unit).description(description).register(registry));
    }

    @Override
    public void close() {
        meters.close();
    }
}
