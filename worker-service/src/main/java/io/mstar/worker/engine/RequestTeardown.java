package io.mstar.worker.engine;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.FailRequests;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.WorkerErrorType;
import io.mstar.wire.WorkerMessage;

/**
 * The one way requests end on a worker (docs/worker-runtime.md#teardown): a failure (one request, or every request on a
 * fatal device error), a removal, an orphan drop when the conductor is gone, and late messages for removed requests.
 * What a running or speculated step holds waits for it: a removal becomes {@link RequestPhase#REMOVING} and a failed
 * request's KV pages stay reserved until {@link #stepsReleased}. A removed request's tensors, stream buffers and pages
 * are freed exactly once and its id tombstoned. Owned by the engine loop.
 */
final class RequestTeardown implements RequestFailures {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    private final OwnerThread owner;
    private final EntityId self;
    private final Map<String, WorkerRequest> requests;
    private final Scheduler scheduler;
    private final TensorLedger ledger;
    private final DataPlane data;
    private final KvCaches kv;
    private final Tombstones tombstones;
    private final ParkedMessages parked;
    private final InputReads reads;
    private final StreamPasses streams;
    private final Outbox outbox;
    private final EngineMeters meters;
    private final Predicate<String> inStep;
    private final Lockstep lockstep;
    /** Requests whose removal waits for a step, in arrival order. */
    private final Set<String> removals = new LinkedHashSet<>();
    /** Failed requests whose KV pages wait for a step that may still write them. */
    private final Set<String> pageReleases = new LinkedHashSet<>();
    private volatile boolean deviceHealthy = true;

    RequestTeardown(OwnerThread owner, EntityId self, Map<String, WorkerRequest> requests, Scheduler scheduler,
            TensorLedger ledger, DataPlane data, KvCaches kv, Tombstones tombstones, ParkedMessages parked,
            InputReads reads, StreamPasses streams, Outbox outbox, EngineMeters meters, Predicate<String> inStep,
            Lockstep lockstep) {
        this.owner = owner;
        this.self = self;
        this.requests = requests;
        this.scheduler = scheduler;
        this.ledger = ledger;
        this.data = data;
        this.kv = kv;
        this.tombstones = tombstones;
        this.parked = parked;
        this.reads = reads;
        this.streams = streams;
        this.outbox = outbox;
        this.meters = meters;
        this.inStep = inStep;
        this.lockstep = lockstep;
    }

    @Override
    public void fail(WorkerRequest request, WorkerErrorType type, String error) {
        owner.check();
        if (request.phase != RequestPhase.ACTIVE) {
            return; // the first cause stays
        }
        stop(request);
        outbox.toConductor(ConductorMessage.of(FailRequests.of(request.requestId, type, error)));
    }

    private void stop(WorkerRequest request) {
        request.move(RequestPhase.Event.FAIL);
        request.end = RequestEnd.FAILED;
        scheduler.removeRequest(request.requestId);
        releasePages(request.requestId);
    }

    /** A sticky device error: every request here fails and liveness goes down so the platform replaces the worker. */
    @Override
    public void fatal(DeviceException e) {
        owner.check();
        log.error("fatal device error on {}: every request fails and liveness goes down", data.device().name(), e);
        deviceHealthy = false;
        Map<String, String> errors = new LinkedHashMap<>();
        Map<String, WorkerErrorType> types = new LinkedHashMap<>();
        for (WorkerRequest request : requests.values()) {
            if (request.phase == RequestPhase.ACTIVE) {
                stop(request);
                errors.put(request.requestId, "fatal device error: " + e.getMessage());
                types.put(request.requestId, WorkerErrorType.DEVICE_FATAL);
            }
        }
        if (!errors.isEmpty()) {
            outbox.toConductor(ConductorMessage.of(new FailRequests(errors, types)));
        }
    }

    /** The conductor's {@code RemoveRequest}: now, or once no step holds the request. */
    void remove(WorkerRequest request) {
        owner.check();
        if (inStep.test(request.requestId)) {
            request.move(RequestPhase.Event.REMOVE_DEFERRED);
            removals.add(request.requestId);
            return;
        }
        removeNow(request);
    }

    /**
     * The conductor that drove every request here is gone (restarted, or silent past its loss timeout): nobody will
     * finish, drain or remove them, so they are removed now, their tensors freed and their ids tombstoned so late
     * peer messages are dropped. The conductor is told all the same: one that was only cut off (a broker outage)
     * still holds them, and would otherwise wait for their deadlines. Returns how many went.
     */
    int dropOrphans(String why) {
        owner.check();
        List<WorkerRequest> orphans = List.copyOf(requests.values());
        Map<String, String> errors = new LinkedHashMap<>();
        Map<String, WorkerErrorType> types = new LinkedHashMap<>();
        for (WorkerRequest request : orphans) {
            if (request.end == null) {
                request.end = RequestEnd.CONDUCTOR_LOST;
            }
            remove(request);
            errors.put(request.requestId, self.value() + " dropped the request: " + why);
            types.put(request.requestId, WorkerErrorType.CONDUCTOR_LOST);
        }
        if (!errors.isEmpty()) {
            outbox.toConductor(ConductorMessage.of(new FailRequests(errors, types)));
        }
        return orphans.size();
    }

    /** Steps completed: removals and page releases that waited for them go on, in arrival order. */
    void stepsReleased() {
        owner.check();
        for (String id : List.copyOf(removals)) {
            WorkerRequest request = requests.get(id);
            if (!inStep.test(id)) {
                removals.remove(id);
                if (request != null) {
                    removeNow(request);
                }
            }
        }
        for (String id : List.copyOf(pageReleases)) {
            if (!inStep.test(id)) {
                pageReleases.remove(id);
                freePages(id);
            }
        }
    }

    private void removeNow(WorkerRequest request) {
        String id = request.requestId;
        request.move(RequestPhase.Event.REMOVE);
        scheduler.removeRequest(id);
        requests.remove(id);
        tombstones.add(id);
        reads.flushAcks(); // reads that landed are still acknowledged
        parked.take(id).forEach(this::dropLate);
        streams.close(request);
        try {
            ledger.store().removeRequest(id);
        } catch (RuntimeException e) {
            log.error("request {}: freeing its tensors failed: {}", id, e.toString(), e);
        }
        data.reader().forget(id);
        pageReleases.remove(id);
        freePages(id);
        lockstep.removed(request);
        meters.ended(request.end == null ? RequestEnd.ABORTED : request.end);
    }

    /** A message for a removed request: dropped, its tensor edges acknowledged unread. */
    void dropLate(WorkerMessage message) {
        owner.check();
        meters.dropped(EngineMeters.DROPPED_LATE);
        if (message.body() instanceof InputSignals signals) {
            reads.ackUnread(signals);
        } else if (message.body() instanceof NewRequest newRequest) {
            reads.ackUnread(newRequest);
        }
    }

    /** A removal for a request never seen here: its late messages are dropped. */
    void tombstone(String requestId) {
        tombstones.add(requestId);
    }

    boolean tombstoned(String requestId) {
        return tombstones.contains(requestId);
    }

    /** A failed request's pages: now, or once no step that may write them runs. */
    private void releasePages(String requestId) {
        if (inStep.test(requestId)) {
            pageReleases.add(requestId);
        } else {
            freePages(requestId);
        }
    }

    /** A request's KV pages, once: a failed request's removal finds none left. */
    private void freePages(String requestId) {
        try {
            kv.release(requestId);
        } catch (RuntimeException e) {
            log.error("request {}: releasing its KV pages failed: {}", requestId, e.toString(), e);
        }
    }

    /** False after a fatal device error (any thread). */
    boolean deviceHealthy() {
        return deviceHealthy;
    }
}
