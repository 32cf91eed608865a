package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.messaging.EntityId;
import io.mstar.metrics.RegisteredMeters;

/**
 * The worker registry's meters, declared once (docs/architecture.md#meters-declared-once-per-role). Tagged by worker
 * id, which is bounded by the deployment config; registered up front for every configured worker so series exist from
 * the start.
 * <ul>
 *   <li>{@code mstar.conductor.workers} (gauge, tag {@code state}): configured workers per lifecycle state;</li>
 *   <li>{@code mstar.conductor.worker.restarts} (counter, tag {@code worker}): new incarnations seen;</li>
 *   <li>{@code mstar.conductor.worker.losses} (counter, tag {@code worker}): READY to LOST moves;</li>
 *   <li>{@code mstar.conductor.worker.heartbeat.age} (gauge, seconds, tag {@code worker}): time since the worker was
 *   last heard from, as of the lifecycle loop's last turn (at most a tick old); NaN before its first word.</li>
 * </ul>
 */
public final class WorkerRegistryMeters implements AutoCloseable {

    public static final String WORKERS = "mstar.conductor.workers";
    public static final String RESTARTS = "mstar.conductor.worker.restarts";
    public static final String LOSSES = "mstar.conductor.worker.losses";
    public static final String HEARTBEAT_AGE = "mstar.conductor.worker.heartbeat.age";

    private final MeterRegistry registry;
    private final RegisteredMeters registered;
    private final Map<EntityId, Counter> restarts = new HashMap<>();
    private final Map<EntityId, Counter> losses = new HashMap<>();

    private volatile Supplier<Map<EntityId, WorkerLifecycle>> states = Map::of;
    private volatile Supplier<Map<EntityId, Duration>> silences = Map::of;

    public WorkerRegistryMeters(MeterRegistry registry, Collection<EntityId> workers) {
        this.registry = registry;
        this.registered = new RegisteredMeters(registry);
        for (WorkerLifecycle state : WorkerLifecycle.values()) {
            registered.add(Gauge.builder(WORKERS, this, m -> m.states.get().values().stream().filter(state::equals).count())
                    .description("Configured workers by lifecycle state")
                    .tag("state", state.name().toLowerCase(java.util.Locale.ROOT))
                    .register(registry));
        }
        for (EntityId worker : workers) {
            restarts.put(worker, registered.add(Counter.builder(RESTARTS)
                    .description("New worker incarnations seen (restarts)")
                    .tag("worker", worker.value()).register(registry)));
            losses.put(worker, registered.add(Counter.builder(LOSSES)
                    .description("Workers declared lost after the loss timeout")
                    .tag("worker", worker.value()).register(registry)));
            registered.add(Gauge.builder(HEARTBEAT_AGE, this, m -> seconds(m.silences.get().get(worker)))
                    .description("Time since the worker was last heard from (SetupDone heartbeat)")
                    .baseUnit("seconds").tag("worker", worker.value()).register(registry));
        }
    }

    /** {@code states} is read at scrape time and must return a published snapshot, never the owner's state. */
    public void bindStates(Supplier<Map<EntityId, WorkerLifecycle>> states) {
        this.states = states;
    }

    /**
     * {@code silences} (each worker's time since it was last heard from; absent or null before its first word) is
     * read at scrape time and must return a published snapshot.
     */
    public void bindSilences(Supplier<Map<EntityId, Duration>> silences) {
        this.silences = silences;
    }

    private static double seconds(Duration silence) {
        return silence == null ? Double.NaN : silence.toNanos() / 1e9;
    }

    void restarted(EntityId worker) {
        restarts.get(worker).increment();
    }

    void lost(EntityId worker) {
        losses.get(worker).increment();
    }

    @Override
    public void close() {
        registered.close();
    }
}
