package io.mstar.worker.engine;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.ModelGraph;
import io.mstar.graph.WorkerGraph;
import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.model.ModelGraphs;
import io.mstar.tensor.TensorStoreSnapshot;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.InputSignals;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.NodeResult;

/**
 * What a worker does with requests (docs/architecture.md#worker-internals, docs/worker-runtime.md): the coordinator of
 * its parts, each with one job: {@link MessageIntake} (control messages, parking, tombstones), {@link InputReads}
 * (input tensors and their acks), {@link Passes} and {@link StreamPasses} (passes, loops, stream chunks),
 * {@link StepPipeline} on a {@link StepExecutor} (batches on the device, speculation), {@link PassReports} (the send
 * gate) and {@link RequestTeardown} (the one way requests end). Every part runs on the engine loop, which owns all of
 * this state and checks it ({@link OwnerThread}); read, send and step completions come back through
 * {@code loopExecutor}. Other threads read only the published {@link EngineSnapshot} and {@link #deviceHealthy()}.
 */
public final class WorkerEngine {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    /** A slot filled by a signal-only edge: no tensor behind it. */
    static final long NO_TENSOR = -1L;
    private static final long SNAPSHOT_INTERVAL_NANOS = 50_000_000L;

    private final OwnerThread owner = new OwnerThread("worker engine");
    private final Map<Integer, WorkerGraph> graphs = new LinkedHashMap<>();
    private final Map<String, ModelGraph> models = new HashMap<>();
    private final Map<String, WorkerRequest> requests = new LinkedHashMap<>();
    private final Scheduler scheduler = new Scheduler();
    private final Executor loopExecutor;
    private final KvCaches kv;
    private final TensorLedger ledger;
    private final Tombstones tombstones;
    private final ParkedMessages parked;
    private final InputReads reads;
    private final Passes passes;
    private final StreamPasses streams;
    private final StepPipeline pipeline;
    private final RequestTeardown teardown;
    private final MessageIntake intake;
    private final Lockstep lockstep;
    /** What the parts built before the teardown call back into. */
    private final Callbacks callbacks = new Callbacks();
    private volatile EngineSnapshot snapshot = EngineSnapshot.EMPTY;
    private long lastSnapshotNanos;

    public WorkerEngine(EntityId self, EngineProperties settings, List<WorkerGraph> workerGraphs, KernelCatalog kernels,
            DataPlane data, Outbox outbox, Executor loopExecutor, EngineMeters meters) {
        this(self, settings, workerGraphs, kernels, data, outbox, loopExecutor, meters, KvCaches.none());
    }

    /** With the KV caches of the deployment's autoregressive nodes ({@link KvCaches#of}). */
    public WorkerEngine(EntityId self, EngineProperties settings, List<WorkerGraph> workerGraphs, KernelCatalog kernels,
            DataPlane data, Outbox outbox, Executor loopExecutor, EngineMeters meters, KvCaches kv) {
        workerGraphs.forEach(g -> graphs.put(g.id(), g));
        this.loopExecutor = loopExecutor;
        this.kv = kv;
        this.ledger = new TensorLedger(data);
        Router router = new Router(self, graphs, this::modelGraph, ledger, outbox, settings.inlineOutputMaxBytes());
        LoopAdvance loops = new LoopAdvance(self, graphs, ledger, router, outbox);
        this.tombstones = new Tombstones(settings.tombstones());
        this.parked = new ParkedMessages(settings.maxParkedPerRequest());
        this.reads = new InputReads(self, ledger, data, outbox, this::onLoop, callbacks);
        PassReports reports = new PassReports(owner, self, outbox, this::onLoop, this::live, callbacks);
        this.passes = new Passes(owner, self, graphs, ledger, router, loops, scheduler, reports, this::resume);
        this.streams = new StreamPasses(owner, ledger, reads, passes, callbacks);
        boolean speculation = settings.pipeline() && settings.speculation().enabled(data.device().kind());
        log.info("{}: steps on {}, speculation {} (setting {}, {} device)", self.value(),
                settings.pipeline() ? "the step thread" : "the loop", speculation ? "on" : "off",
                settings.speculation().name().toLowerCase(Locale.ROOT), data.device().kind());
        this.lockstep = new Lockstep(owner, self, graphs, requests, outbox, kv, meters, speculation,
                settings.lockstepTimeout(), System::nanoTime, tombstones::contains, this::removeFollowed, reads::drained);
        this.pipeline = new StepPipeline(owner, settings, kernels, scheduler, kv, data, ledger, meters, speculation,
                lockstep, callbacks);
        this.teardown = new RequestTeardown(owner, self, requests, scheduler, ledger, data, kv, tombstones, parked, reads,
                streams, outbox, meters, pipeline::holds, lockstep);
        this.intake = new MessageIntake(owner, graphs, kernels, requests, parked, scheduler, reads, ledger, passes,
                streams, teardown, outbox, meters, lockstep);
        pipeline.runOn(settings.pipeline()
                ? new StepThread(self, data.device(), this::onLoop, pipeline::completed)
                : StepExecutor.synchronous(data.device(), pipeline::completed));
    }

    public void handle(WorkerMessage message) {
        intake.handle(message);
    }

    /**
     * One turn of work after the commands: stream chunks, the next step (or a speculated one), acks, published state.
     * Answers whether a turn now would start a step, so the loop turns again at once.
     */
    public boolean turn(long nowNanos) {
        owner.check();
        try {
            streams.poll(List.copyOf(requests.values()));
        } catch (DeviceException e) {
            if (e.isFatal()) {
                teardown.fatal(e);
            }
        } catch (RuntimeException e) {
            log.warn("cutting stream chunks failed: {}", e.toString(), e);
        }
        lockstep.follower().expire();
        pipeline.turn();
        reads.flushAcks();
        // Every 50 ms at most, busy or idle (an idle loop still turns every tick): a snapshot walks every live tensor,
        // and publishing one whenever the queue ran dry cost a busy loop that walk on nearly every turn.
        if (nowNanos - lastSnapshotNanos > SNAPSHOT_INTERVAL_NANOS) {
            publishSnapshot();
            lastSnapshotNanos = nowNanos;
        }
        return pipeline.wantsTurn();
    }

    /** See {@link RequestTeardown#dropOrphans}. */
    public int dropOrphans(String why) {
        return teardown.dropOrphans(why);
    }

    /** A tensor-parallel follower's removal: relayed by its leader, or the conductor's with no relay in time. */
    private void removeFollowed(WorkerRequest request) {
        teardown.remove(request);
    }

    private void resume(WorkerRequest request, InputSignals pending) {
        intake.resume(request, pending);
    }

    private boolean live(WorkerRequest request) {
        return requests.get(request.requestId) == request;
    }

    /** The engine's side of its parts: reads and steps change requests through the passes and the teardown. */
    private final class Callbacks implements InputReads.Callbacks, StepPipeline.Callbacks {

        @Override
        public boolean live(WorkerRequest request) {
            return WorkerEngine.this.live(request);
        }

        @Override
        public void fail(WorkerRequest request, WorkerErrorType type, String error) {
            teardown.fail(request, type, error);
        }

        @Override
        public void fatal(DeviceException e) {
            teardown.fatal(e);
        }

        @Override
        public void ingest(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node,
                String signal, long uuid) {
            passes.ingest(request, partition, pass, node, signal, uuid);
        }

        @Override
        public void complete(ReadyItem item, NodeResult result, double seconds, Step.Continuation continuation,
                Step next) {
            passes.complete(item, result, seconds, continuation, next);
        }

        @Override
        public void stepsReleased() {
            teardown.stepsReleased();
        }
    }

    private void onLoop(Runnable command) {
        try {
            loopExecutor.execute(command);
        } catch (RuntimeException e) {
            log.debug("engine loop stopped; a completion is dropped: {}", e.toString());
        }
    }

    private ModelGraph modelGraph(String model) {
        return models.computeIfAbsent(model, ModelGraphs::of);
    }

    private void publishSnapshot() {
        TensorStoreSnapshot tensors = ledger.store().snapshot();
        int readsInFlight = requests.values().stream().mapToInt(r -> r.readsInFlight).sum();
        snapshot = new EngineSnapshot(requests.size(), scheduler.queuedRequests(), scheduler.queued(), parked.size(),
                readsInFlight, tombstones.size(), tensors);
    }

    /** Waits for the running step, then frees everything, on the loop (docs/architecture.md#the-owner-releases). */
    public void shutdown() {
        owner.check();
        try {
            pipeline.close();
            ledger.store().removeAll();
        } finally {
            kv.close();
            requests.clear();
            publishSnapshot();
        }
    }

    /** Where every request stands ({@link EngineDescription}); on the loop only. */
    public EngineDescription describe() {
        owner.check();
        return new EngineDescription(pipeline.inFlight().stream().map(EngineDescription.StepView::of).toList(),
                scheduler.readyPerKey(), pipeline.pageWaits(), requests.values().stream()
                        .map(r -> EngineDescription.describe(r, pipeline.holds(r.requestId))).toList());
    }

    /** Publishes and answers the snapshot now; on the loop only (tests' leak checks). */
    EngineSnapshot snapshotNow() {
        owner.check();
        publishSnapshot();
        return snapshot;
    }

    /** What other threads may read: published each turn. */
    public EngineSnapshot snapshot() {
        return snapshot;
    }

    public boolean deviceHealthy() {
        return teardown.deviceHealthy();
    }

    /** Streamed tokens whose reads had not landed when their request was removed (dropped when they land). */
    long forgottenStreamReads() {
        return streams.forgottenReads();
    }

    /** Reads that landed after their request was removed, dropped unstored. */
    long landedAfterRemoval() {
        return reads.landedAfterRemoval();
    }

    /** Releases of tensors no longer held: a double release would show here (tests' exactly-once checks). */
    long unknownReleases() {
        return ledger.unknownReleases();
    }

    /** Speculated steps run and speculated calls voided since start (tests, benchmarks). */
    long speculatedSteps() {
        return pipeline.speculatedSteps();
    }

    long voidedSpeculatedCalls() {
        return pipeline.voidedCalls();
    }
}
