package io.mstar.worker.engine;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mstar.metrics.MeterDeclaration;
import io.mstar.metrics.RegisteredMeters;

/**
 * The engine's meters, declared once (docs/architecture.md#meters-declared-once-per-role). Tags are bounded: model,
 * node, walk, reason — never a request. Live tensors by state and device bytes are {@code TensorMeters}'
 * (tensor-runtime), registered next to these. Counters and timers are updated on the engine loop; gauges read the
 * published {@link EngineSnapshot}.
 */
public final class EngineMeters implements AutoCloseable {

    /** Every engine meter: name, type, base unit, tags, description. */
    public enum Definition {
        BATCHES("mstar.worker.batches", Meter.Type.COUNTER, null, List.of("model", "node", "walk"),
                "Batches run, per node and walk"),
        BATCH_SIZE("mstar.worker.batch.size", Meter.Type.DISTRIBUTION_SUMMARY, null, List.of("model", "node"),
                "Requests per batch, per node"),
        STEP("mstar.worker.step", Meter.Type.TIMER, "seconds", List.of("model", "node", "walk"),
                "Kernel time of one batch, per node and walk (histogram buckets)"),
        REQUESTS_ACTIVE("mstar.worker.requests.active", Meter.Type.GAUGE, null, List.of(),
                "Requests known to this worker (running, draining or failed, until removed)"),
        REQUESTS_QUEUED("mstar.worker.requests.queued", Meter.Type.GAUGE, null, List.of(),
                "Requests with a node ready and waiting for a batch"),
        REQUESTS_ENDED("mstar.worker.requests.ended", Meter.Type.COUNTER, null, List.of("cause"),
                "Requests that left this worker, by cause: completed, failed, aborted, conductor_lost"),
        DROPPED("mstar.worker.messages.dropped", Meter.Type.COUNTER, null, List.of("reason"),
                "Messages dropped without effect, by reason: late (for a request already removed here), stale_ack "
                        + "(an ack or unpersist naming a tensor already freed)"),
        TRANSITION_WAIT("mstar.worker.transition.wait", Meter.Type.TIMER, "seconds", List.of("model", "walk"),
                "A partition pass's WorkerGraphsDone sent to the next walk's InputSignals received, per next walk"),
        LOOP_QUEUE_WAIT("mstar.worker.loop.queue.wait", Meter.Type.TIMER, "seconds", List.of(),
                "Time a command waited in the engine loop's queue: the hand-off from the listener, reader or API "
                        + "thread plus the turn ahead of it (histogram buckets)"),
        LOCKSTEP_ANOMALIES("mstar.worker.lockstep.anomalies", Meter.Type.COUNTER, null, List.of("kind"),
                "Tensor-parallel follower events that should not happen, by kind: resident_mismatch (a batch's "
                        + "request offloaded here after the leader's moves), dropped_batch (a leader batch that could "
                        + "not start in time), skipped_call (a batch's request failed or left here), unrelayed_removal "
                        + "(a conductor removal applied with no relay from the leader)"),
        COLLECTIVE_JOINS("mstar.worker.collective.joins", Meter.Type.COUNTER, null, List.of("transport"),
                "Joins of this worker's tensor-parallel collective, by transport: shared_memory, host_staged, nccl. "
                        + "The first batch joins once; every later join rebuilt the group after a failed collective "
                        + "(a rank lost, restarted or set up otherwise)");

        private final MeterDeclaration declaration;

        Definition(String meterName, Meter.Type type, String baseUnit, List<String> tags, String description) {
            this.declaration = new MeterDeclaration(meterName, type, baseUnit, tags, description);
        }

        public MeterDeclaration declaration() {
            return declaration;
        }
    }

    /**
     * Bucket bounds of the step timer (100 µs to 10 s), so dashboards can take its quantiles; a few fixed bounds keep
     * the series per (model, node, walk) low.
     */
    static final java.time.Duration[] STEP_BUCKETS = java.util.stream.DoubleStream.of(0.0001, 0.00025, 0.0005, 0.001,
            0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)
            .mapToObj(s -> java.time.Duration.ofNanos(Math.round(s * 1e9))).toArray(java.time.Duration[]::new);


    /** The kinds of {@link Definition#LOCKSTEP_ANOMALIES}. */
    static final String RESIDENT_MISMATCH = "resident_mismatch";
    static final String DROPPED_BATCH = "dropped_batch";
    static final String SKIPPED_CALL = "skipped_call";
    static final String UNRELAYED_REMOVAL = "unrelayed_removal";
    /** The transports of {@link Definition#COLLECTIVE_JOINS}. */
    static final String SHARED_MEMORY = "shared_memory";
    static final String HOST_STAGED = "host_staged";
    static final String NCCL = "nccl";

    /** The reasons of {@link Definition#DROPPED}. */
    static final String DROPPED_LATE = "late";
    static final String DROPPED_STALE_ACK = "stale_ack";

    private final MeterRegistry registry;
    private final RegisteredMeters registered;
    private final Map<List<String>, Meter[]> perNode = new ConcurrentHashMap<>();
    private final Map<RequestEnd, Counter> ends = new java.util.EnumMap<>(RequestEnd.class);
    private final Map<String, Counter> dropped = new java.util.HashMap<>();
    private final Map<String, Counter> anomalies = new java.util.HashMap<>();
    private final Map<List<String>, Timer> transitionWaits = new ConcurrentHashMap<>();
    private final Timer loopQueueWait;

    public EngineMeters(MeterRegistry registry, Supplier<EngineSnapshot> snapshot) {
        this.registry = registry;
        this.registered = new RegisteredMeters(registry);
        loopQueueWait = registered.add(Definition.LOOP_QUEUE_WAIT.declaration().timer()
                .serviceLevelObjectives(io.mstar.loop.OwnerLoop.queueWaitBuckets()).register(registry));
        registered.add(Definition.REQUESTS_ACTIVE.declaration().gauge(() -> snapshot.get().requests())
                .strongReference(true).register(registry));
        registered.add(Definition.REQUESTS_QUEUED.declaration().gauge(() -> snapshot.get().queuedRequests())
                .strongReference(true).register(registry));
        // Every cause registered at zero, so rate() sees each from the start.
        for (RequestEnd cause : RequestEnd.values()) {
            ends.put(cause, registered.add(Definition.REQUESTS_ENDED.declaration().counter(cause.value())
                    .register(registry)));
        }
        for (String reason : List.of(DROPPED_LATE, DROPPED_STALE_ACK)) {
            dropped.put(reason, registered.add(Definition.DROPPED.declaration().counter(reason).register(registry)));
        }
        for (String kind : List.of(RESIDENT_MISMATCH, DROPPED_BATCH, SKIPPED_CALL, UNRELAYED_REMOVAL)) {
            anomalies.put(kind, registered.add(Definition.LOCKSTEP_ANOMALIES.declaration().counter(kind)
                    .register(registry)));
        }
        for (String transport : List.of(SHARED_MEMORY, HOST_STAGED, NCCL)) {
            registered.add(collectiveJoins(registry, transport));
        }
    }

    /**
     * The {@link Definition#COLLECTIVE_JOINS} counter of {@code transport}: the one every registration of it in
     * {@code registry} answers, so the rank's collective ({@link RankCollectives}) counts into the series this class
     * registered at zero.
     */
    static Counter collectiveJoins(MeterRegistry registry, String transport) {
        return Definition.COLLECTIVE_JOINS.declaration().counter(transport).register(registry);
    }

    void batch(String model, String node, String walk, int size, double seconds) {
        Meter[] meters = perNode.computeIfAbsent(List.of(model, node, walk), k -> new Meter[] {
            registered.add(Definition.BATCHES.declaration().counter(model, node, walk).register(registry)),
            registered.add(Definition.BATCH_SIZE.declaration().summary(model, node).register(registry)),
            registered.add(Definition.STEP.declaration().timer(model, node, walk).serviceLevelObjectives(STEP_BUCKETS)
                    .register(registry))});
        ((Counter) meters[0]).increment();
        ((DistributionSummary) meters[1]).record(size);
        ((Timer) meters[2]).record(java.time.Duration.ofNanos((long) (seconds * 1e9)));
    }

    /** The end-to-end transition as this worker sees it: two Kafka hops and the conductor's turn. */
    void transitionWait(String model, String walk, long nanos) {
        transitionWaits.computeIfAbsent(List.of(model, walk),
                k -> registered.add(Definition.TRANSITION_WAIT.declaration().timer(model, walk).register(registry)))
                .record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Runs on the engine loop before each command (OwnerLoop's queue wait). */
    void loopQueueWait(long nanos) {
        loopQueueWait.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    void dropped(String reason) {
        dropped.get(reason).increment();
    }

    /** A tensor-parallel follower event of {@code kind} ({@link Definition#LOCKSTEP_ANOMALIES}). */
    void lockstepAnomaly(String kind, int count) {
        anomalies.get(kind).increment(count);
    }

    void ended(RequestEnd cause) {
        ends.get(cause).increment();
    }

    @Override
    public void close() {
        registered.close();
    }
}
