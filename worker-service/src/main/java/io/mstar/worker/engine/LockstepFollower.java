package io.mstar.worker.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.loop.OwnerThread;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.wire.OffloadDelta;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.TPNoSpeculation;

/**
 * A tensor-parallel follower's side of {@link Lockstep} (docs/tensor-parallelism.md#one-lead-step): the leader's
 * batches in a FIFO per node, taken all or nothing after the leader's KV moves are replayed; relayed removals parked
 * until the batch they wait for ran; drains answered once no queued batch names the request; and the bounds on every
 * wait for a leader that went quiet. Owned by the engine loop.
 */
final class LockstepFollower {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    /** A leader's batch in the FIFO, and when it came. */
    private record Queued(ScheduleTPNode schedule, long arrivedNanos) {
    }

    /** The requests of a batch that are here and schedulable, and their model (null when none is). */
    private record Live(String model, List<String> ids) {
    }

    /**
     * A leader's batch that closed here, as a speculated batch on it needs to know: whether it voids that batch (it
     * threw, or was dropped here), the requests it named, and those whose call neither failed nor finished (the others
     * are dropped from the speculated batch, on the leader as here).
     */
    private record Closed(boolean voidsNext, List<String> named, Set<String> continuing) {
    }

    /** How many closed batches are remembered: a speculated batch follows the one it continues closely. */
    private static final int CLOSED_KEPT = 256;

    private final OwnerThread owner;
    private final Map<String, WorkerRequest> requests;
    private final KvCaches kv;
    private final EngineMeters meters;
    /** A request that left this worker (tombstoned), as opposed to one whose NewRequest has not come yet. */
    private final Predicate<String> gone;
    private final Consumer<WorkerRequest> remove;
    private final Consumer<WorkerRequest> readsDone;
    private final long timeoutNanos;
    private final LongSupplier clock;
    private final Map<String, ArrayDeque<Queued>> fifos = new LinkedHashMap<>();
    /** Conductor removals of followed requests, applied here at their deadline unless the leader's relay came first. */
    private final Map<String, Long> removalDeadlines = new LinkedHashMap<>();
    /** Per request, the last batch that named it and ran here. */
    private final Map<String, Long> ranFor = new HashMap<>();
    /** Relayed removals waiting for their batch, by the seq they wait for. */
    private final TreeMap<Long, List<String>> parkedRemovals = new TreeMap<>();
    private final Set<String> drainsOwed = new LinkedHashSet<>();
    /** The model of each node a batch named a live request of: a node's moves replay on that model's cache. */
    private final Map<String, String> nodeModels = new HashMap<>();
    private final Map<Long, Closed> closed = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Closed> eldest) {
            return size() > CLOSED_KEPT;
        }
    };
    private boolean lastRanFollowerBatch;
    /**
     * Heads whose requests were all ready but did not fit the free KV pages, with {@link KvCaches#pagesFreedEvents()}
     * then: a removal relayed behind the batch frees them (pages the leader took over before its batch).
     */
    private final Map<Queued, Long> waitingForPages = new IdentityHashMap<>();

    LockstepFollower(OwnerThread owner, Map<String, WorkerRequest> requests, KvCaches kv, EngineMeters meters,
            java.time.Duration timeout, LongSupplier clock, Predicate<String> gone, Consumer<WorkerRequest> remove,
            Consumer<WorkerRequest> readsDone) {
        this.owner = owner;
        this.requests = requests;
        this.kv = kv;
        this.meters = meters;
        this.timeoutNanos = timeout.toNanos();
        this.clock = clock;
        this.gone = gone;
        this.remove = remove;
        this.readsDone = readsDone;
    }

    /** Whether no leader batch is queued here. */
    boolean idle() {
        return fifos.values().stream().allMatch(ArrayDeque::isEmpty);
    }

    /** Whether a FIFO head could start now: its requests all ready, or its time up (it is dropped then). */
    boolean couldRun(Scheduler scheduler) {
        owner.check();
        for (ArrayDeque<Queued> fifo : fifos.values()) {
            Queued head = fifo.peek();
            if (head != null && (satisfiable(scheduler, effective(head.schedule())) && !stillNoPages(head)
                    || expired(head))) {
                return true;
            }
        }
        return false;
    }

    /** {@code request} left this worker: nothing kept for it any more. */
    void forget(String requestId) {
        ranFor.remove(requestId);
        drainsOwed.remove(requestId);
        removalDeadlines.remove(requestId);
    }

    void onSchedule(ScheduleTPNode schedule) {
        owner.check();
        fifos.computeIfAbsent(schedule.nodeName(), n -> new ArrayDeque<>()).add(new Queued(schedule,
                clock.getAsLong()));
    }

    void onNoSpeculation(TPNoSpeculation none) {
        owner.check();
        log.trace("leader will not speculate on batch {} of {}", none.specFromSeq(), none.nodeName());
    }

    /**
     * The next follower batch, or null: the head of a FIFO whose every request is ready here (a request that failed or
     * left here is skipped: the leader decides, and the rest still run). After a follower batch, a worker that has
     * work of its own ({@code ownWork}) does that first.
     */
    Lockstep.Batch next(Scheduler scheduler, boolean ownWork, Predicate<List<ReadyItem>> fitsFreePages) {
        owner.check();
        if (lastRanFollowerBatch && ownWork) {
            lastRanFollowerBatch = false;
            return null;
        }
        for (ArrayDeque<Queued> fifo : fifos.values()) {
            Queued queued = fifo.peek();
            if (queued == null) {
                continue;
            }
            ScheduleTPNode head = effective(queued.schedule());
            if (head == VOIDED) {
                fifo.poll();
                waitingForPages.remove(queued);
                ran(queued.schedule()); // the leader never runs it: removals waiting for it go on
                log.debug("speculative batch {} of {} voided: batch {} threw", queued.schedule().specSeq(),
                        queued.schedule().nodeName(), queued.schedule().specFromSeq());
                release();
                continue;
            }
            if (expired(queued) && (head == null || !satisfiable(scheduler, head) || stillNoPages(queued))) {
                // the leader's collectives for it have timed out: its requests fail there, and their removals follow;
                // its moves were made on the leader all the same
                ScheduleTPNode dropped = queued.schedule();
                replay(dropped);
                fifo.poll();
                waitingForPages.remove(queued);
                closed.put(dropped.specSeq(), new Closed(true, dropped.requestIds(), Set.of()));
                meters.lockstepAnomaly(EngineMeters.DROPPED_BATCH, 1);
                log.warn("batch {} of {} dropped: not every request it names was ready here within {} ms{}",
                        dropped.specSeq(), dropped.nodeName(), timeoutNanos / 1_000_000,
                        head == null ? " (the batch it was speculated on never closed here)" : "");
                release();
                continue; // the turn this asks for looks at the FIFO's next head
            }
            if (head == null) {
                continue; // speculated on a batch that has not closed here yet
            }
            Live live = liveOf(head);
            if (live == null || !replay(head)) {
                continue; // a NewRequest has not come yet, or a move of the leader's cannot be made here yet (no room)
            }
            Scheduler.Key key = new Scheduler.Key(live.model(), head.nodeName(), head.graphWalk());
            List<ReadyItem> ready = live.ids().isEmpty() ? List.of() : scheduler.peekExactly(key, live.ids());
            if (ready == null) {
                continue; // not every request is ready for the node yet
            }
            if (!ready.isEmpty() && !fitsFreePages.test(ready)) {
                // the leader ran it on pages of a request whose removal it relayed behind the batch: wait for that
                waitingForPages.put(queued, kv.pagesFreedEvents());
                continue;
            }
            waitingForPages.remove(queued);
            List<ReadyItem> items = ready.isEmpty() ? List.of() : scheduler.takeExactly(key, live.ids());
            checkResident(live.model(), head, live.ids());
            fifo.poll();
            ran(queued.schedule()); // also the calls a speculated batch dropped: the leader named them in it
            int skipped = head.requestIds().size() - live.ids().size();
            if (skipped > 0) {
                meters.lockstepAnomaly(EngineMeters.SKIPPED_CALL, skipped);
                log.warn("batch {} of {}: {} of its requests failed or left here; the rest run", head.specSeq(),
                        head.nodeName(), skipped);
            }
            if (items.isEmpty()) {
                closed.put(head.specSeq(), new Closed(false, head.requestIds(), Set.of()));
                release();
                continue;
            }
            lastRanFollowerBatch = true;
            return new Lockstep.Batch(items, head);
        }
        lastRanFollowerBatch = false;
        return null;
    }

    /**
     * Replays {@code head}'s moves on the node's cache (whose model the last batch of the node with a live request
     * named; a node none named yet has no cache here, so nothing to move): false while one cannot be made yet.
     */
    private boolean replay(ScheduleTPNode head) {
        String model = nodeModels.get(head.nodeName());
        return model == null || kv.replay(model, head.nodeName(), head.residentDelta());
    }

    /**
     * After the leader's moves: every request of its batch holds its pages on the device here too, as on the leader,
     * which runs it. One that does not is a resident-set mismatch: counted and logged, naming the batch and requests.
     */
    private void checkResident(String model, ScheduleTPNode head, List<String> live) {
        List<String> offloaded = live.stream().filter(id -> !kv.residentOrUnknown(model, head.nodeName(), id)).toList();
        if (!offloaded.isEmpty()) {
            meters.lockstepAnomaly(EngineMeters.RESIDENT_MISMATCH, 1);
            log.error("batch {} of {}: requests {} are offloaded here but resident on the leader", head.specSeq(),
                    head.nodeName(), offloaded);
        }
    }

    /** Every request {@code schedule} names is past it here: removals relayed after it may go on. */
    private void ran(ScheduleTPNode schedule) {
        owner.check();
        for (String id : schedule.requestIds()) {
            ranFor.merge(id, schedule.specSeq(), Math::max);
        }
    }

    /**
     * A relayed removal: applied now ({@code remove}) when the batch it waits for ran, else parked until it has.
     */
    void onRelayedRemoval(WorkerRequest request, RemoveRequest removal) {
        owner.check();
        parkedRemovals.computeIfAbsent(removal.afterTpSeq(), s -> new ArrayList<>()).add(request.requestId);
        release();
    }

    /** Marks a voided speculative batch in {@link #effective}. */
    private static final ScheduleTPNode VOIDED = new ScheduleTPNode("", "", List.of(), true, -1, -1,
            OffloadDelta.newDelta());

    /**
     * The batch a FIFO head stands for here. A plain one as it came. A speculative one only once the batch it
     * continues has closed here: {@link #VOIDED} if that batch threw (the leader voids it then), else without the
     * calls whose requests that batch failed or finished (the leader drops those when it threads the step in). Null
     * while that batch has not closed. Derived from what this rank saw, with no message from the leader: ranks that
     * saw different outcomes run different batches, and their collectives fail within their timeout.
     */
    private ScheduleTPNode effective(ScheduleTPNode head) {
        if (!head.speculative()) {
            return head;
        }
        Closed from = closed.get(head.specFromSeq());
        if (from == null) {
            return null;
        }
        if (from.voidsNext()) {
            return VOIDED;
        }
        List<String> ids = head.requestIds().stream()
                .filter(id -> !from.named().contains(id) || from.continuing().contains(id)).toList();
        return ids.size() == head.requestIds().size() ? head : new ScheduleTPNode(head.nodeName(), head.graphWalk(),
                ids, true, head.specSeq(), head.specFromSeq(), head.residentDelta());
    }

    /** A follower batch completed here: what a speculated batch on it needs ({@link #effective}). */
    void closed(Step step) {
        owner.check();
        List<String> named = step.items.stream().map(item -> item.request().requestId).toList();
        Set<String> continuing = new HashSet<>();
        for (int i = 0; step.error == null && i < step.items.size(); i++) {
            NodeResult result = step.results == null ? null : step.results[i];
            if (result != null && !result.failed() && !result.finish()) {
                continuing.add(named.get(i));
            }
        }
        closed.put(step.tpSeq, new Closed(step.error != null, named, continuing));
    }

    /** Whether {@code head}, a FIFO head as {@link #effective} made it, could start now (a voided one is taken off). */
    private boolean satisfiable(Scheduler scheduler, ScheduleTPNode head) {
        if (head == null || head == VOIDED) {
            return head == VOIDED;
        }
        Live live = liveOf(head);
        return live != null && (live.ids().isEmpty() || scheduler.hasExactly(
                new Scheduler.Key(live.model(), head.nodeName(), head.graphWalk()), live.ids()));
    }

    /**
     * The requests {@code head} names that run here, skipping those that failed or left (the leader decides, the rest
     * still run); null while one has not come yet (its NewRequest is on the way).
     */
    private Live liveOf(ScheduleTPNode head) {
        List<String> ids = new ArrayList<>();
        String model = null;
        for (String id : head.requestIds()) {
            WorkerRequest request = requests.get(id);
            if (request == null && !gone.test(id)) {
                return null;
            }
            if (request != null && request.schedulable()) {
                model = request.model;
                ids.add(id);
            }
        }
        if (model != null) {
            nodeModels.put(head.nodeName(), model);
        }
        return new Live(model, ids);
    }

    /** Whether {@code queued} did not fit the free pages, and none were freed since. */
    private boolean stillNoPages(Queued queued) {
        Long at = waitingForPages.get(queued);
        return at != null && at == kv.pagesFreedEvents();
    }

    private boolean expired(Queued queued) {
        return clock.getAsLong() - queued.arrivedNanos() > timeoutNanos;
    }

    /** Parked removals whose batch ran go on, in seq order; owed ReadsDone go out. */
    void release() {
        owner.check();
        for (Map.Entry<Long, List<String>> e : List.copyOf(parkedRemovals.entrySet())) {
            List<String> ids = e.getValue();
            for (String id : List.copyOf(ids)) {
                WorkerRequest request = requests.get(id);
                if (request == null) {
                    ids.remove(id);
                } else if (ranFor.getOrDefault(id, -1L) >= e.getKey()) {
                    ids.remove(id);
                    remove.accept(request);
                }
            }
            if (ids.isEmpty()) {
                parkedRemovals.remove(e.getKey());
            }
        }
        for (String id : List.copyOf(drainsOwed)) {
            WorkerRequest request = requests.get(id);
            if (request == null) {
                drainsOwed.remove(id);
            } else if (!queuedFor(id)) {
                drainsOwed.remove(id);
                readsDone.accept(request);
            }
        }
    }

    /** A conductor's drain of a followed request: its ReadsDone waits until no queued batch names it. */
    void oweDrain(WorkerRequest request) {
        owner.check();
        drainsOwed.add(request.requestId);
        release();
    }

    private boolean queuedFor(String requestId) {
        return fifos.values().stream().flatMap(ArrayDeque::stream)
                .anyMatch(q -> q.schedule().requestIds().contains(requestId));
    }

    /**
     * A conductor's removal of a followed request: the leader's relay normally comes and applies it; if none came
     * within the timeout (the leader is gone, or never had the request), it is applied here by {@link #expire}.
     */
    void onConductorRemoval(WorkerRequest request) {
        owner.check();
        removalDeadlines.putIfAbsent(request.requestId, clock.getAsLong() + timeoutNanos);
    }

    /** Applies conductor removals whose relay did not come in time (the engine calls it every turn). */
    void expire() {
        owner.check();
        if (removalDeadlines.isEmpty()) {
            return;
        }
        long now = clock.getAsLong();
        for (Map.Entry<String, Long> e : List.copyOf(removalDeadlines.entrySet())) {
            WorkerRequest request = requests.get(e.getKey());
            if (request == null) {
                removalDeadlines.remove(e.getKey());
            } else if (now - e.getValue() > 0) {
                removalDeadlines.remove(e.getKey());
                log.warn("request {}: the leader relayed no removal within {} ms; removed on the conductor's word",
                        e.getKey(), timeoutNanos / 1_000_000);
                meters.lockstepAnomaly(EngineMeters.UNRELAYED_REMOVAL, 1);
                remove.accept(request);
            }
        }
    }
}
