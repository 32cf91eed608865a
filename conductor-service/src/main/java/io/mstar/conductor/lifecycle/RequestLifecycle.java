package io.mstar.conductor.lifecycle;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.model.ConductorPolicies;
import io.mstar.conductor.model.ConductorPolicy;
import io.mstar.conductor.model.PolicyRequest;
import io.mstar.conductor.output.Chunk;
import io.mstar.conductor.tensors.ConductorTensors;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.EntityId;
import io.mstar.model.ModelGraphs;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.RequestOutcome;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerErrorType;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * Every request's life on the conductor (docs/architecture.md#a-requests-life,
 * docs/architecture.md#teardown-abort-and-failure; docs/request-flow.md): admission, inputs, walks, outputs, teardown.
 * Owned by the lifecycle loop: every method runs there (checked), so the state needs no locks; other threads reach it
 * through {@link LifecycleLoop} and read the {@link #published()} counts.
 *
 * <p>Each request moves only through {@link #move}, which applies {@link RequestState#next} and updates the
 * metrics at the edges. A running request's walks go pass by pass through {@link WalkDriver}; its outputs reach the
 * client through {@link OutputDelivery}, both on the same loop; reads and refused sends complete on other threads
 * and come back through the {@code toLoop} executor given at {@link #bindOwner}.
 */
public final class RequestLifecycle {

    private static final Logger log = LoggerFactory.getLogger(RequestLifecycle.class);

    /** Counts other threads may read. */
    public record Published(int inFlight, int queued) {
    }

    /** What a submission gets back: its id and its output stream (one subscriber). */
    public record Admission(String requestId, Flux<Chunk> chunks) {
    }

    private final DeploymentConfig config;
    private final ConductorPolicies policies;
    private final Map<String, ModelTopology> models = new LinkedHashMap<>();
    private final WorkerOutbox outbox;
    private final ConductorTensors tensors;
    private final RequestMeters meters;
    private final Duration drainTimeout;
    private final Clock clock;
    private final OutputDelivery delivery;
    private final WalkDriver walks;
    private final Map<String, ActiveRequest> requests = new HashMap<>();
    private final ArrayDeque<String> queue = new ArrayDeque<>();
    private final RemovedRequests removed = new RemovedRequests();
    private Predicate<EntityId> workerReady = w -> false;
    private Consumer<Runnable> toLoop;
    private Thread owner;
    private boolean shuttingDown;
    private int active;
    private volatile Published published = new Published(0, 0);

    public RequestLifecycle(DeploymentConfig config, ConductorPolicies policies, WorkerOutbox outbox,
            ConductorTensors tensors, RequestMeters meters, Duration drainTimeout, Clock clock) {
        this.config = config;
        this.policies = policies;
        this.outbox = outbox;
        this.tensors = tensors;
        this.meters = meters;
        this.drainTimeout = drainTimeout;
        this.clock = clock;
        var graphs = ModelGraphs.of(config);
        List<WorkerGraph> split = WorkerGraphSplit.split(config, graphs);
        for (ModelConfig model : config.models()) {
            models.put(model.name(), new ModelTopology(model, graphs.get(model.name()), split));
        }
        meters.bindGauges(() -> published.inFlight(), () -> published.queued());
        // toLoop is read when a read completes or a send is refused, by then bound by bindOwner.
        RequestCallbacks callbacks = new Callbacks();
        this.delivery = new OutputDelivery(outbox, tensors, meters, task -> toLoop.accept(task), callbacks);
        this.walks = new WalkDriver(outbox, tensors, meters, task -> toLoop.accept(task), callbacks);
    }

    /**
     * Binds the owner thread, how to get back onto it, and which workers may take new requests. Called once by the
     * loop as it starts.
     */
    public void bindOwner(Consumer<Runnable> toLoop, Predicate<EntityId> workerReady) {
        this.owner = Thread.currentThread();
        this.toLoop = toLoop;
        this.workerReady = workerReady;
    }

    public Published published() {
        return published;
    }

    /** Models served: configured and with a policy. */
    public List<String> models() {
        return models.keySet().stream().filter(m -> policies.of(m).isPresent()).toList();
    }

    // ---- admission ----

    /**
     * Takes a client request: admits it when fewer than {@code max_concurrent_requests} are active, else queues it;
     * a full queue, an unknown model, a live duplicate id or bad inputs throw {@link ConductorException} and leave
     * nothing behind.
     */
    public Admission submit(Submission submission) {
        checkOwner();
        String id = submission.requestId();
        if (shuttingDown) {
            throw new ConductorException(ErrorType.SHUTTING_DOWN, "the conductor is shutting down");
        }
        ModelTopology topology = models.get(submission.model());
        ConductorPolicy policy = policies.of(submission.model()).orElse(null);
        if (topology == null || policy == null) {
            throw new ConductorException(ErrorType.UNKNOWN_MODEL, "model '" + submission.model() + "' is not served; "
                    + "served: " + models());
        }
        if (requests.containsKey(id)) {
            throw new ConductorException(ErrorType.DUPLICATE_REQUEST_ID, "request '" + id + "' is still live");
        }
        submission.requireInputs(policy.inputDtypes());
        boolean admitNow = active < config.maxConcurrentRequests() && queue.isEmpty();
        if (!admitNow && queue.size() >= config.maxQueuedRequests()) {
            throw new ConductorException(ErrorType.QUEUE_FULL, "queue full (" + config.maxQueuedRequests() + " waiting)");
        }
        if (admitNow && !topology.placeable(workerReady)) {
            throw new ConductorException(ErrorType.NO_READY_WORKERS, "no ready instance for every node group of model '"
                    + submission.model() + "'");
        }
        long now = System.nanoTime();
        Duration timeout = submission.deadline() != null ? submission.deadline() : config.requestTimeout();
        long seed = submission.seed() != null ? submission.seed() : seedOf(id);
        ActiveRequest request = new ActiveRequest(submission, topology, policy,
                Sinks.many().unicast().onBackpressureBuffer(), seed, now, clock.instant(), now + timeout.toNanos());
        Map<String, List<TensorPointerInfo>> inputs = new TreeMap<>();
        try {
            submission.inputs().forEach((name, tensor) -> inputs.put(name,
                    List.of(tensors.storeInput(id, tensor.dtype(), tensor.dims(), tensor.data()))));
            request.policyRequest = new PolicyRequest(id, submission.maxTokens(), submission.modelKwargs(), inputs);
            policy.validate(request.policyRequest);
        } catch (RuntimeException e) {
            tensors.removeRequest(id);
            throw e;
        }
        requests.put(id, request);
        removed.forget(id);
        if (admitNow) {
            admit(request);
        } else {
            queue.addLast(id);
            log.debug("request {} queued ({} waiting)", id, queue.size());
        }
        publish();
        return new Admission(id, request.clientStream.watch(request.sink.asFlux()));
    }

    /** The seed of a request without an explicit one: a pure function of its id (a pinned id reproduces). */
    static long seedOf(String requestId) {
        long h = 1125899906842597L;
        for (int i = 0; i < requestId.length(); i++) {
            h = 31 * h + requestId.charAt(i);
        }
        return h & Long.MAX_VALUE;
    }

    private void admit(ActiveRequest request) {
        Map<Integer, List<String>> placement = request.topology.place(workerReady);
        move(request, RequestEvent.ADMIT);
        active++;
        meters.queued(request.submission.model(), Duration.ofNanos(System.nanoTime() - request.submittedNanos));
        if (placement == null) {
            fail(request, ErrorType.NO_READY_WORKERS, "no ready instance for every node group when admitted");
            return;
        }
        request.placement = placement;
        walks.start(request);
    }

    private void admitQueued() {
        while (active < config.maxConcurrentRequests() && !queue.isEmpty()) {
            ActiveRequest next = requests.get(queue.pollFirst());
            if (next != null && next.state == RequestState.QUEUED) {
                admit(next);
            }
        }
        publish();
    }

    // ---- passes ----

    public void onWorkerGraphsDone(WorkerGraphsDone done, EntityId sender) {
        checkOwner();
        long arrivedNanos = System.nanoTime();
        ActiveRequest request = requests.get(done.requestId());
        if (request == null || request.state != RequestState.RUNNING) {
            log.debug("WorkerGraphsDone for {} request {} from {} ignored", request == null ? "unknown" : request.state,
                    done.requestId(), sender);
            return;
        }
        walks.onWorkerGraphsDone(request, done, sender, arrivedNanos);
    }

    // ---- outputs (delivered by OutputDelivery) ----

    public void onResultTensors(ResultTensors result, EntityId sender) {
        checkOwner();
        ActiveRequest request = requests.get(result.requestId());
        if (request == null || request.state != RequestState.RUNNING) {
            delivery.acknowledgeUnread(result);
            return;
        }
        delivery.receive(request, result);
    }

    private void maybeFinish(ActiveRequest request) {
        if (request.state == RequestState.RUNNING && request.allPartitionsDone() && request.outputsSettled()) {
            end(request, RequestEvent.FINISH, RequestOutcome.COMPLETED, null, null, null);
        }
    }

    // ---- endings ----

    /** Aborts a request, wherever it is; idempotent. Returns false when the id is unknown. */
    public boolean abort(String requestId, AbortReason reason) {
        checkOwner();
        ActiveRequest request = requests.get(requestId);
        if (request == null) {
            return removed.contains(requestId);
        }
        if (!request.state.ended()) {
            meters.cancelled(reason);
        }
        end(request, RequestEvent.ABORT, RequestOutcome.ABORTED, reason.errorType(), reason, "aborted: " + reason.value());
        return true;
    }

    /** Aborts every live request; returns how many were not already ending. */
    public int abortAll(AbortReason reason) {
        checkOwner();
        int n = 0;
        // Queued first, so freed slots do not admit requests about to be aborted.
        for (String id : new ArrayList<>(queue)) {
            n += abortCounting(id, reason);
        }
        for (String id : new ArrayList<>(requests.keySet())) {
            n += abortCounting(id, reason);
        }
        return n;
    }

    private int abortCounting(String id, AbortReason reason) {
        ActiveRequest request = requests.get(id);
        if (request == null || request.state.ended()) {
            return 0;
        }
        abort(id, reason);
        return 1;
    }

    public void onFailRequests(FailRequests failure, EntityId sender) {
        checkOwner();
        failure.errors().forEach((id, message) -> {
            ActiveRequest request = requests.get(id);
            if (request != null) {
                WorkerErrorType type = failure.typeOf(id);
                // An input a kernel found unusable, or a request too large for the KV cache, is the client's error.
                ErrorType error = switch (type) {
                    case INVALID_INPUT -> ErrorType.INVALID_INPUT;
                    case KV_CAPACITY_EXCEEDED -> ErrorType.KV_CAPACITY_EXCEEDED;
                    default -> ErrorType.WORKER_FAILED;
                };
                fail(request, error, sender.value() + " (" + type.value() + "): " + message);
            }
        });
    }

    /** A worker was lost or restarted: every request placed on it fails, and is torn down on the others. */
    public void onWorkerGone(EntityId worker, ErrorType type, String why) {
        checkOwner();
        for (ActiveRequest request : new ArrayList<>(requests.values())) {
            if (!request.workers().contains(worker.value())) {
                continue;
            }
            // It will send no ReadsDone (it lost the request); the others still drain.
            request.awaitingReadsDone.remove(worker.value());
            if (request.state == RequestState.RUNNING) {
                fail(request, type, worker.value() + " " + why);
                request.awaitingReadsDone.remove(worker.value());
            }
            if (request.state == RequestState.DRAINING) {
                maybeRemove(request);
            }
        }
    }

    private void fail(ActiveRequest request, ErrorType type, String detail) {
        if (!request.state.ended()) {
            log.warn("request {} failed: {} ({})", request.id(), type.value(), detail);
        }
        end(request, RequestEvent.FAIL, RequestOutcome.FAILED, type, null, detail);
    }

    /**
     * The one place a request ends: fixes the outcome (the first one wins), answers the client with the terminal
     * chunk, and starts the teardown (queued: dropped at once; running: drained).
     */
    private void end(ActiveRequest request, RequestEvent event, RequestOutcome outcome, ErrorType type, AbortReason reason,
            String detail) {
        RequestState before = request.state;
        move(request, event);
        if (before.ended()) {
            return; // idempotent: the first outcome stays
        }
        request.outcome = outcome;
        request.errorType = type;
        request.abortReason = reason;
        request.detail = detail;
        request.endedNanos = System.nanoTime();
        meters.ended(request.submission.model(), outcome, type == null ? null : type.value(),
                Duration.ofNanos(request.endedNanos - request.submittedNanos));
        delivery.endStream(request);
        if (before == RequestState.QUEUED) {
            queue.remove(request.id());
            release(request);
            return;
        }
        request.awaitingReadsDone.addAll(request.workers());
        for (String worker : request.workers()) {
            outbox.send(EntityId.parse(worker), new DrainRequest(request.id(), request.outcome));
        }
        request.drainDeadlineNanos = System.nanoTime() + drainTimeout.toNanos();
        maybeRemove(request);
        admitQueued();
    }

    public void onReadsDone(ReadsDone done) {
        checkOwner();
        ActiveRequest request = requests.get(done.requestId());
        if (request == null || request.state != RequestState.DRAINING) {
            log.debug("ReadsDone from {} for {} request {} ignored", done.entityId(),
                    request == null ? "unknown" : request.state, done.requestId());
            return;
        }
        request.awaitingReadsDone.remove(done.entityId());
        maybeRemove(request);
    }

    private void maybeRemove(ActiveRequest request) {
        if (request.state == RequestState.DRAINING && request.awaitingReadsDone.isEmpty() && request.readsInFlight == 0) {
            remove(request);
        }
    }

    private void remove(ActiveRequest request) {
        delivery.flushAcks(request.id());
        for (String worker : request.workers()) {
            outbox.send(EntityId.parse(worker), new RemoveRequest(request.id()));
        }
        move(request, RequestEvent.DRAINED);
        active--;
        release(request);
        if (request.outcome == RequestOutcome.ABORTED) {
            meters.abortReleased(Duration.ofNanos(System.nanoTime() - request.endedNanos));
        }
        admitQueued();
    }

    /** Frees what the conductor holds for the request and keeps a tombstone. */
    private void release(ActiveRequest request) {
        tensors.removeRequest(request.id());
        tensors.forgetReads(request.id());
        requests.remove(request.id());
        removed.add(request);
        publish();
    }

    // ---- time ----

    /** Sends the output acknowledgements collected during the loop's turn; called by the loop at each turn's end. */
    public void flushAcks() {
        checkOwner();
        delivery.flushAcks();
    }

    /** Deadlines and drain timeouts at {@code nowNanos}; called by the loop every tick. */
    public void tick(long nowNanos) {
        checkOwner();
        for (ActiveRequest request : new ArrayList<>(requests.values())) {
            if (!request.state.ended() && nowNanos - request.deadlineNanos > 0) {
                abort(request.id(), AbortReason.DEADLINE);
            }
            if (request.state == RequestState.DRAINING && nowNanos - request.drainDeadlineNanos > 0) {
                meters.drainTimedOut();
                log.warn("request {} drain timed out after {}: no ReadsDone from {}, {} own reads in flight; removing",
                        request.id(), drainTimeout, request.awaitingReadsDone, request.readsInFlight);
                request.awaitingReadsDone.clear();
                remove(request);
            }
        }
    }

    /** Refuses new requests and aborts every live one (shutdown). */
    public int shutdown() {
        checkOwner();
        shuttingDown = true;
        int aborted = abortAll(AbortReason.SHUTDOWN);
        // No drain wait at shutdown: the loop is about to stop and would never see the ReadsDone.
        for (ActiveRequest request : new ArrayList<>(requests.values())) {
            if (request.state == RequestState.DRAINING) {
                request.awaitingReadsDone.clear();
                remove(request);
            }
        }
        return aborted;
    }

    // ---- queries ----

    public RequestView view(String requestId) {
        checkOwner();
        ActiveRequest request = requests.get(requestId);
        if (request != null) {
            return request.view();
        }
        return removed.view(requestId);
    }

    /** Live requests (and, for {@link RequestState#REMOVED}, remembered ones) in {@code state}, or all live ones. */
    public List<RequestView> list(RequestState state) {
        checkOwner();
        if (state == RequestState.REMOVED) {
            return removed.views();
        }
        return requests.values().stream().filter(r -> state == null || r.state == state)
                .sorted((a, b) -> Long.compare(a.submittedNanos, b.submittedNanos)).map(ActiveRequest::view).toList();
    }

    /** Live (admitted, not removed) requests placed on each worker: the admin API's load figure. */
    public Map<String, Integer> requestsPerWorker() {
        checkOwner();
        Map<String, Integer> load = new TreeMap<>();
        for (ActiveRequest request : requests.values()) {
            for (String worker : request.workers()) {
                load.merge(worker, 1, Integer::sum);
            }
        }
        return load;
    }

    /** Requests live on the conductor (not removed). */
    public int liveRequests() {
        checkOwner();
        return requests.size();
    }

    /** Conductor-held input tensors (for leak checks). */
    public int liveInputTensors() {
        checkOwner();
        return tensors.liveTensors();
    }

    private void move(ActiveRequest request, RequestEvent event) {
        request.state = request.state.next(event);
    }

    private void publish() {
        published = new Published(active, queue.size());
    }

    private void checkOwner() {
        if (owner != null && Thread.currentThread() != owner) {
            throw new IllegalStateException("RequestLifecycle is owned by " + owner.getName() + ", called from "
                    + Thread.currentThread().getName());
        }
    }

    /** The state machine as walks and output delivery see it; a private class so none of it becomes public API here. */
    private final class Callbacks implements RequestCallbacks {

        @Override
        public boolean live(ActiveRequest request) {
            return requests.get(request.id()) == request;
        }

        @Override
        public void fail(ActiveRequest request, ErrorType type, String detail) {
            RequestLifecycle.this.fail(request, type, detail);
        }

        @Override
        public void maybeFinish(ActiveRequest request) {
            RequestLifecycle.this.maybeFinish(request);
        }

        @Override
        public void maybeRemove(ActiveRequest request) {
            RequestLifecycle.this.maybeRemove(request);
        }
    }

}
