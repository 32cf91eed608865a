package io.mstar.worker.resident;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * A node's resident-planning meters: {@code mstar.worker.resident.replays} (steps replayed on tables),
 * {@code .captures} (steps captured), {@code .refusals{reason}} (batches that ran eagerly, by a reason from a fixed
 * set: {@link Refusal}) and {@code .staged} (bytes uploaded per step), each tagged by model and node.
 */
public final class ResidentStats {

    /** Why a batch of a resident-capable node ran eagerly: a bounded label. */
    public enum Refusal {
        /** A resource of the node refuses ({@code resident_refusal}); logged once with its reason. */
        RESOURCE,
        /** More rows than the largest capture size. */
        BATCH_TOO_LARGE,
        /** A request holds no slot (every slot is leased). */
        NO_SLOT,
        /** A request's pages do not fit its row of the page table. */
        SEQUENCE_TOO_LONG,
        /** A call feeds other than one token (the captured step is a decode step). */
        NOT_A_DECODE_STEP;

        String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final MeterRegistry registry;
    private final String model;
    private final String node;
    private final Counter replays;
    private final Counter captures;
    private final DistributionSummary staged;
    private final Map<Refusal, Counter> refusals = new ConcurrentHashMap<>();
    private final Map<Phase, Timer> phases = new EnumMap<>(Phase.class);

    /** The parts of a resident step on the host, in order: what the step's time goes to. */
    public enum Phase {
        /** The planner: rows for new or stale requests, each resource's staged changes. */
        PLAN,
        /** The plan encoded into the pinned staging and copied to the capture's upload. */
        UPLOAD,
        /** The graph launched and its sampled tokens read back: the device's work and the wait for it. */
        REPLAY,
        /** The host mirror advanced by what the step committed. */
        ADVANCE;

        String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** @param registry where the meters go; null keeps them to this object (tests, benchmarks) */
    public ResidentStats(MeterRegistry registry, String model, String node) {
        this.registry = registry == null ? new SimpleMeterRegistry() : registry;
        this.model = model;
        this.node = node;
        this.replays = Counter.builder("mstar.worker.resident.replays").tag("model", model).tag("node", node)
                .description("Steps replayed on resident tables (a captured step), per node").register(this.registry);
        this.captures = Counter.builder("mstar.worker.resident.captures").tag("model", model).tag("node", node)
                .description("Steps captured for resident replay, per node").register(this.registry);
        this.staged = DistributionSummary.builder("mstar.worker.resident.staged").baseUnit("bytes")
                .tag("model", model).tag("node", node)
                .description("Bytes uploaded ahead of each resident replay (slots and the plan's writes)")
                .register(this.registry);
        for (Phase p : Phase.values()) {
            phases.put(p, Timer.builder("mstar.worker.resident.step").tag("model", model).tag("node", node)
                    .tag("phase", p.tag()).description("Host time of a resident step by phase (replay: the device's "
                            + "work and the wait for its sampled tokens)").register(this.registry));
        }
    }

    /**
     * Publishes {@code mstar.worker.resident.tables}: device bytes the node's tables and captured steps hold for the
     * worker's life (not by requests: leak checks subtract them, as they do the KV pools).
     */
    public void heldBytes(java.util.function.LongSupplier bytes) {
        io.micrometer.core.instrument.Gauge.builder("mstar.worker.resident.tables", bytes::getAsLong)
                .tag("model", model).tag("node", node).baseUnit("bytes")
                .description("Device bytes a node's resident tables and captured steps hold, for the worker's life")
                .register(registry);
    }

    void ran(int uploadBytes) {
        replays.increment();
        staged.record(uploadBytes);
    }

    /** Records {@code nanos} spent in {@code phase} of one step. */
    public void time(Phase phase, long nanos) {
        phases.get(phase).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** The timer of one phase (benchmarks read its totals). */
    public Timer phase(Phase phase) {
        return phases.get(phase);
    }

    void captured() {
        captures.increment();
    }

    /** A batch of the node ran eagerly, for {@code reason}. */
    public void refused(Refusal reason) {
        refusals.computeIfAbsent(reason, r -> refusals(registry, model, node, r)).increment();
    }

    /**
     * {@code mstar.worker.resident.refusals}: a node that refused the tables at load (reason {@code resource}, counted
     * once), or a batch of a planning node that ran eagerly (the other reasons, per batch).
     */
    static Counter refusals(MeterRegistry registry, String model, String node, Refusal reason) {
        return Counter.builder("mstar.worker.resident.refusals").tag("model", model).tag("node", node)
                .tag("reason", reason.tag())
                .description("Resident planning refused: a node at load (resource) or a batch that ran eagerly")
                .register(registry);
    }

    public long replays() {
        return (long) replays.count();
    }

    public long captures() {
        return (long) captures.count();
    }

    public long refusals(Refusal reason) {
        Counter c = refusals.get(reason);
        return c == null ? 0 : (long) c.count();
    }

    /** Bytes staged over every replay. */
    public double stagedBytes() {
        return staged.totalAmount();
    }
}
