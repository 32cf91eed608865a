package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.loop.OwnerThread;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.NodeResult;

/**
 * The loop's side of the step pipeline (docs/worker-runtime.md#the-step-pipeline): builds the next batch from the
 * scheduler, reserves its KV positions and submits it; while it runs, may speculate the batch after it
 * (docs/worker-runtime.md#speculation); takes completed steps back and hands each call's result to the pass. Knows
 * which requests a running or speculated step holds, so their removal and page release wait for it.
 * Owned by the engine loop.
 */
final class StepPipeline {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    /** What a completed step's calls do to their requests. */
    interface Callbacks extends RequestFailures {

        /** A call's outputs: stored, routed, loops advanced; {@code continuation} names loop-backs to hold for {@code next}. */
        void complete(ReadyItem item, NodeResult result, double seconds, Step.Continuation continuation, Step next);

        /** Whether {@code request} is the live request under its id. */
        boolean live(WorkerRequest request);

        /** No step holds some requests any more: their deferred teardown may go on. */
        void stepsReleased();
    }

    /**
     * The longest step the loop runs itself: its heartbeats, SetupDone and every message wait for it, and the
     * conductor counts a worker silent for {@code worker-loss-timeout} (6 s) as lost.
     */
    static final long LOOP_STEP_MAX_NANOS = 50_000_000L;

    private final OwnerThread owner;
    private final EngineProperties settings;
    /** Per node and walk, its last step's nanoseconds per call: whether the next may run on the loop. */
    private final Map<Scheduler.Key, Long> nanosPerCall = new HashMap<>();
    private final KernelCatalog kernels;
    private final Scheduler scheduler;
    private final KvCaches kv;
    private final DataPlane data;
    private final TensorLedger ledger;
    private final EngineMeters meters;
    private final Callbacks engine;
    private final boolean speculation;
    private final Map<String, Integer> inSteps = new HashMap<>();
    private final PageWaits pageWaits;
    private final Lockstep lockstep;
    private StepExecutor executor;
    private Step running;
    private Step speculated;
    private final StepBuilder builder;
    private long speculatedSteps;
    private long voidedCalls;

    StepPipeline(OwnerThread owner, EngineProperties settings, KernelCatalog kernels, Scheduler scheduler, KvCaches kv,
            DataPlane data, TensorLedger ledger, EngineMeters meters, boolean speculation, Lockstep lockstep,
            Callbacks engine) {
        this.owner = owner;
        this.settings = settings;
        this.kernels = kernels;
        this.scheduler = scheduler;
        this.kv = kv;
        this.data = data;
        this.ledger = ledger;
        this.meters = meters;
        this.speculation = speculation;
        this.engine = engine;
        this.lockstep = lockstep;
        this.pageWaits = new PageWaits(kernels, scheduler, kv, engine, lockstep::inLockstep);
        this.builder = new StepBuilder(kernels, scheduler, kv, data, ledger, pageWaits, lockstep, this::holds);
    }

    /** The executor steps go to; its completions come back to {@link #completed}. Set once, before the first turn. */
    void runOn(StepExecutor executor) {
        this.executor = executor;
    }

    /** Submits the next batch when no step runs, or speculates one on the running step. */
    void turn() {
        owner.check();
        pageWaits.offer(running != null);
        if (running == null) {
            Lockstep.Batch batch = lockstep.next(scheduler, this::batchLimit, builder::fitsFreePages);
            if (!batch.items().isEmpty()) {
                Step step;
                try {
                    step = track(builder.build(batch.items(), null, null));
                } catch (RuntimeException e) {
                    refuse(batch.items(), e);
                    return;
                }
                if (step != null) {
                    lockstep.submitting(step, batch);
                    if (runsOnLoop(step)) {
                        StepExecutor.run(data.device(), step);
                        completed(step);
                        return;
                    }
                    running = step;
                    executor.submit(step);
                }
            }
        }
        // At once: an idle loop may not turn again before the running step completes.
        if (speculation && running != null && !lockstep.follows(running.key)) {
            if (speculated != null && rejoins(speculated)) {
                takeBack(speculated, true);
                speculated = null;
            }
            // a chain of speculated steps never ends while requests keep coming back: other work breaks it
            if (speculated == null && !lockstep.couldRunBesides(scheduler, running.key)) {
                speculate(running);
            }
        }
    }

    /**
     * A short one-shot step on a host device (no KV cache, no loop, no lockstep) runs on the loop itself: its kernel
     * computes on the cores the loop would use, nothing could be speculated after it, and the step thread would add two
     * thread wake-ups to the request's path (benchmarks/README.md#minilm-embed-on-onnx-runtime). Short: its node's
     * last step, per call, times its calls is under {@link #LOOP_STEP_MAX_NANOS}; a node's first step, whose length
     * nobody knows, goes to the step thread.
     */
    private boolean runsOnLoop(Step step) {
        if (data.device().kind() != DeviceKind.HOST || step.kernel instanceof KvCacheKernel || step.tpSeq >= 0
                || lockstep.inLockstep(step.key) || step.items.stream().anyMatch(item -> item.node().loop != null)) {
            return false;
        }
        Long perCall = nanosPerCall.get(step.key);
        return perCall != null && perCall * step.items.size() < LOOP_STEP_MAX_NANOS;
    }

    /**
     * Whether requests became ready for a speculated step that has room, and the executor gave the step back before it
     * started: it is built again with them. A lockstep step, broadcast already, stays as it is.
     */
    private boolean rejoins(Step step) {
        return !lockstep.inLockstep(step.key) && step.items.size() < batchLimit(step.key)
                && scheduler.hasReady(step.key) && executor.withdraw(running, step);
    }

    /** Whether a turn now could start a step: no step runs and a batch is ready. */
    boolean wantsTurn() {
        return running == null && scheduler.queued() > 0 && lockstep.couldRun(scheduler);
    }

    /** Whether a running or speculated step holds {@code requestId}: its teardown waits for it. */
    boolean holds(String requestId) {
        return inSteps.containsKey(requestId);
    }

    /** Counts a built step's requests as held by a step (null: nothing was built). */
    private Step track(Step step) {
        if (step != null) {
            step.items.forEach(item -> inSteps.merge(item.request().requestId, 1, Integer::sum));
        }
        return step;
    }

    private int batchLimit(Scheduler.Key key) {
        return Math.min(settings.maxBatchSize(), kernels.model(key.model()).kernel(key.node()).maxBatchSize());
    }

    /**
     * While {@code on} runs: the step after it, for the same node and walk, with every call of {@code on} whose loop
     * goes on into its next iteration (placeholders for the loop-backs {@code on} will produce) and fresh requests
     * ready for the same node and walk. Nothing is speculated after a refusal, nor for a request that is no longer
     * running, whose loop was asked to stop, or that is at its loop's last iteration.
     */
    private void speculate(Step on) {
        for (NodeResult r : on.refused) {
            if (r != null) {
                return;
            }
        }
        List<ReadyItem> items = new ArrayList<>();
        List<Step.Continuation> continuations = new ArrayList<>();
        List<Integer> iterations = new ArrayList<>();
        for (int i = 0; i < on.items.size(); i++) {
            if (on.dropped[i]) {
                continue;
            }
            ReadyItem item = on.items.get(i);
            Set<String> loopBacks = item.nextIterationLoopBacks(on.iterations[i]);
            if (loopBacks != null) {
                items.add(item);
                continuations.add(new Step.Continuation(i, loopBacks));
                iterations.add(on.iterations[i] + 1);
            }
        }
        if (items.isEmpty()) {
            return;
        }
        for (ReadyItem fresh : scheduler.take(on.key, batchLimit(on.key) - items.size())) {
            items.add(fresh);
            continuations.add(null);
            iterations.add(fresh.node().loop == null ? -1 : fresh.node().loop.iteration);
        }
        Step next;
        try {
            next = track(builder.build(items, continuations, iterations));
        } catch (RuntimeException e) {
            log.warn("speculating on step {} of {} failed; the eager path goes on: {}", on.seq, on.key.node(),
                    e.toString(), e);
            for (int i = 0; i < items.size(); i++) {
                if (continuations.get(i) == null) {
                    scheduler.add(items.get(i));
                }
            }
            return;
        }
        if (next == null) {
            return;
        }
        if (executor.speculate(on, next)) {
            speculated = next;
            speculatedSteps++;
            lockstep.speculating(on, next);
        } else {
            takeBack(next, false);
        }
    }

    /**
     * A speculated step that does not run: its reservations and holds go back, its fresh requests to the ready set
     * (ahead of those that became ready since, when the step was {@code withdrawn} to be built again with them).
     */
    private void takeBack(Step step, boolean withdrawn) {
        List<ReadyItem> fresh = new ArrayList<>();
        for (int i = 0; i < step.items.size(); i++) {
            ReadyItem item = step.items.get(i);
            if (step.kv != null && step.kv.get(i) != null) {
                kv.rollback(step.key.model(), step.key.node(), step.kv.get(i));
            }
            if (step.continues[i] == null) {
                if (engine.live(item.request()) && item.request().schedulable()) {
                    fresh.add(item);
                } else {
                    item.node().queued = false;
                }
            }
        }
        if (withdrawn) {
            scheduler.addFirst(fresh);
            speculatedSteps--; // not submitted after all
        } else {
            fresh.forEach(scheduler::add);
            voidedCalls += step.items.size();
        }
        release(step);
    }

    /** Back on the loop: a step whose device work completed. */
    void completed(Step step) {
        owner.check();
        // only a kernel that recomputes reads fed tokens back; recording them for another is wasted work per step
        if (step.error == null && step.kv != null && step.kernel instanceof KvCacheKernel k && k.recordsFeeds()) {
            for (int i = 0; i < step.items.size(); i++) {
                if (!step.dropped[i] && step.kv.get(i) != null) {
                    kv.fed(step.key.model(), step.key.node(), step.kv.get(i));
                }
            }
        }
        Step next = step.next;
        running = next != null && !next.voided ? next : null;
        if (next != null) {
            speculated = null;
        }
        try {
            if (step.error != null) {
                failAll(step);
            } else {
                nanosPerCall.put(step.key, step.nanos / step.items.size());
                meters.batch(step.key.model(), step.key.node(), step.key.walk(), step.items.size(), step.nanos / 1e9);
                finish(step);
            }
        } finally {
            if (next != null && next.voided) {
                takeBack(next, false);
            } else if (next != null) {
                for (int j = 0; j < next.items.size(); j++) {
                    if (next.dropped[j] && next.kv != null && next.kv.get(j) != null) {
                        kv.rollback(next.key.model(), next.key.node(), next.kv.get(j));
                        voidedCalls++;
                    }
                }
            }
            release(step);
            engine.stepsReleased();
            lockstep.completed(step);
        }
    }

    private void finish(Step step) {
        double seconds = step.nanos / 1e9;
        for (int i = 0; i < step.items.size(); i++) {
            if (step.dropped[i]) {
                continue; // never ran; its node went back to the eager path when the step before completed
            }
            ReadyItem item = step.items.get(i);
            NodeResult result = step.results[i];
            if (!step.continuesInNext(i)) {
                item.node().queued = false;
            }
            if (step.speculated() && step.continues[i] != null && !stillContinues(step, i)) {
                discard(step, i, result);
                continue;
            }
            if (!engine.live(item.request())) {
                freeWhenUnread(step, i, result);
                continue;
            }
            if (result.failed()) {
                engine.fail(item.request(), result.errorType(), result.error());
                continue;
            }
            try {
                engine.complete(item, result, seconds, step.continuationOf(i), step.next);
            } catch (DeviceException e) {
                if (e.isFatal()) {
                    engine.fatal(e);
                    return;
                }
                engine.fail(item.request(), WorkerErrorType.DEVICE_ERROR, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("request {}: after {} failed: {}", item.request().requestId, step.key.node(), e.toString(), e);
                engine.fail(item.request(), EngineException.typeOf(e), e.toString());
            }
        }
    }

    /** A batch that could not be built (its KV pool could not be taken, say): each of its requests fails. */
    private void refuse(List<ReadyItem> batch, RuntimeException e) {
        batch.forEach(item -> item.node().queued = false);
        if (e instanceof DeviceException device && device.isFatal()) {
            engine.fatal(device);
            return;
        }
        log.warn("batch of {} ({} requests) failed: {}", batch.get(0).node().node.name(), batch.size(), e.toString(), e);
        WorkerErrorType type = e instanceof DeviceException ? WorkerErrorType.DEVICE_ERROR : EngineException.typeOf(e);
        batch.forEach(item -> engine.fail(item.request(), type, "batch of " + item.node().node.name() + " failed: " + e));
    }

    /** A step that threw: every call fails (a fatal device error fails the worker). */
    private void failAll(Step step) {
        RuntimeException e = step.error;
        for (int i = 0; i < step.items.size(); i++) {
            if (!step.dropped[i]) {
                step.items.get(i).node().queued = false;
            }
        }
        if (e instanceof DeviceException device && device.isFatal()) {
            engine.fatal(device);
            return;
        }
        WorkerErrorType type = e instanceof DeviceException ? WorkerErrorType.DEVICE_ERROR : EngineException.typeOf(e);
        if (!(e instanceof DeviceException)) {
            log.warn("batch of {} ({} requests) failed: {}", step.key.node(), step.items.size(), e.toString(), e);
        }
        for (int i = 0; i < step.items.size(); i++) {
            ReadyItem item = step.items.get(i);
            if (step.dropped[i] || step.speculated() && step.continues[i] != null && !stillContinues(step, i)) {
                continue; // its request stopped before this step: the failure is not its
            }
            engine.fail(item.request(), type, "batch of " + step.key.node() + " failed: "
                    + (e instanceof DeviceException ? e.getMessage() : e.toString()));
        }
    }

    /** A speculated continuing call still belongs: its loop went on into the iteration it ran. */
    private boolean stillContinues(Step step, int i) {
        ReadyItem item = step.items.get(i);
        LoopState loop = item.node().loop;
        return engine.live(item.request()) && loop != null && !loop.done && loop.iteration == step.iterations[i]
                && item.partition().pass == item.pass() && !item.pass().complete;
    }

    /** A speculated call whose request stopped at the step before: its outputs are freed, its positions taken back. */
    private void discard(Step step, int i, NodeResult result) {
        freeWhenUnread(step, i, result);
        if (step.kv != null && step.kv.get(i) != null) {
            kv.rollback(step.key.model(), step.key.node(), step.kv.get(i));
        }
        voidedCalls++;
    }

    /** Frees call {@code i}'s outputs, or once the speculated step that reads them as loop-backs completed. */
    private void freeWhenUnread(Step step, int i, NodeResult result) {
        if (step.continuesInNext(i)) {
            step.next.freeAfter.add(result);
        } else {
            free(result);
        }
    }

    private void free(NodeResult result) {
        if (result != null) {
            result.outputs().values().forEach(t -> data.device().free(t.buffer()));
        }
    }

    private void release(Step step) {
        step.held.forEach(uuid -> ledger.release(uuid, 1));
        step.held.clear();
        step.freeAfter.forEach(this::free);
        step.freeAfter.clear();
        for (ReadyItem item : step.items) {
            inSteps.computeIfPresent(item.request().requestId, (id, n) -> n == 1 ? null : n - 1);
        }
    }

    /** The running step, then the one speculated on it (as far as the loop knows). */
    List<Step> inFlight() {
        owner.check();
        List<Step> steps = new ArrayList<>();
        if (running != null) {
            steps.add(running);
        }
        if (speculated != null) {
            steps.add(speculated);
        }
        return steps;
    }

    /** Calls waiting for KV pages. */
    int pageWaits() {
        return pageWaits.size();
    }

    /** Speculated steps submitted, and calls of speculated steps that were voided, dropped or discarded, since start. */
    long speculatedSteps() {
        return speculatedSteps;
    }

    long voidedCalls() {
        return voidedCalls;
    }

    /**
     * At shutdown, on the loop: waits for the running step, then frees what steps produced that the loop never took
     * back (their completions come after the loop's last command).
     */
    void close() {
        owner.check();
        executor.close();
        for (Step step = running; step != null; step = step.next) {
            step.freeAfter.forEach(this::free);
            if (step.results != null) {
                for (NodeResult r : step.results) {
                    free(r);
                }
            }
            if (step.next != null && step.next.voided) {
                break;
            }
        }
        running = null;
        speculated = null;
    }
}
