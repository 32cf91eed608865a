package io.mstar.worker.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.WorkerGraph;
import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.wire.MessageSource;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.TPNoSpeculation;
import io.mstar.wire.WorkerMessage;

/**
 * Tensor-parallel lockstep on one worker (docs/tensor-parallelism.md#the-protocol). A node whose worker graph a request
 * places on several workers runs on all of them in the same batches: rank 0 (the first worker listed) leads, choosing
 * each batch and broadcasting it as a {@link ScheduleTPNode} before it runs; the others follow, keeping the leader's
 * batches in a FIFO per node and running only its head, once every request it names is ready here. The leader relays
 * its removals ({@code after_tp_seq}: the last batch that named the request), and a follower applies them only after
 * it ran that batch. Owned by the engine loop.
 */
final class Lockstep {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    /** Where this worker stands for one scheduler key. */
    enum Role {
        /** Not tensor-parallel here: scheduled on its own. */
        ALONE,
        /** Rank 0: chooses and broadcasts the batches. */
        LEADS,
        /** Rank 1 and up: runs the leader's batches only. */
        FOLLOWS
    }

    /** A leader's batch in a follower's FIFO, and when it came. */
    private record Queued(ScheduleTPNode schedule, long arrivedNanos) {
    }

    /** The next batch to build: ready items, and the leader's message when it is a follower's batch (else null). */
    record Batch(List<ReadyItem> items, ScheduleTPNode schedule) {
    }

    private final OwnerThread owner;
    private final EntityId self;
    private final Map<Integer, WorkerGraph> graphs;
    private final Map<String, WorkerRequest> requests;
    private final Outbox outbox;
    private final boolean speculation;
    /** A request that left this worker (tombstoned), as opposed to one whose NewRequest has not come yet. */
    private final Predicate<String> gone;
    private final Map<Scheduler.Key, Role> roles = new HashMap<>();
    // leader
    private long nextSeq;
    private final Map<String, Long> lastNamed = new HashMap<>();
    // follower
    private final Map<String, ArrayDeque<Queued>> fifos = new LinkedHashMap<>();
    /** Conductor removals of followed requests, applied here at their deadline unless the leader's relay came first. */
    private final Map<String, Long> removalDeadlines = new LinkedHashMap<>();
    private final Map<String, Long> ranFor = new HashMap<>();
    /** Relayed removals waiting for their batch, by the seq they wait for. */
    private final TreeMap<Long, List<String>> parkedRemovals = new TreeMap<>();
    private final Set<String> drainsOwed = new LinkedHashSet<>();
    private final Consumer<WorkerRequest> remove;
    private final Consumer<WorkerRequest> readsDone;
    private boolean lastRanFollowerBatch;
    private final long timeoutNanos;
    private final java.util.function.LongSupplier clock;
    private long followerBatches;
    private long skippedCalls;
    private long droppedBatches;

    Lockstep(OwnerThread owner, EntityId self, Map<Integer, WorkerGraph> graphs, Map<String, WorkerRequest> requests,
            Outbox outbox, boolean speculation, java.time.Duration timeout, java.util.function.LongSupplier clock,
            Predicate<String> gone, Consumer<WorkerRequest> remove, Consumer<WorkerRequest> readsDone) {
        this.owner = owner;
        this.self = self;
        this.graphs = graphs;
        this.requests = requests;
        this.outbox = outbox;
        this.speculation = speculation;
        this.gone = gone;
        this.remove = remove;
        this.readsDone = readsDone;
        this.timeoutNanos = timeout.toNanos();
        this.clock = clock;
    }

    /** The workers of the worker graph that runs {@code item}'s node for its request, rank 0 first. */
    static List<String> ranks(ReadyItem item) {
        for (WorkerGraph graph : item.pass().graphs) {
            if (graph.nodeNames().contains(item.node().node.name())) {
                return item.request().workerGraphToWorkers.getOrDefault(graph.id(), List.of());
            }
        }
        return List.of();
    }

    Role role(ReadyItem item) {
        return roles.computeIfAbsent(Scheduler.key(item), k -> roleOf(ranks(item)));
    }

    private Role roleOf(List<String> ranks) {
        if (ranks.size() < 2) {
            return Role.ALONE;
        }
        return ranks.get(0).equals(self.value()) ? Role.LEADS : Role.FOLLOWS;
    }

    private boolean followed(ReadyItem item) {
        return role(item) == Role.FOLLOWS;
    }

    /** Whether {@code step} runs in lockstep with other workers (it must not be speculated on: not built yet). */
    boolean inLockstep(Step step) {
        return role(step.items.get(0)) != Role.ALONE;
    }

    /**
     * The next batch: a follower batch (see {@link #nextFollowerBatch}), else the scheduler's choice among the keys
     * this worker schedules itself; empty when nothing is ready.
     */
    Batch next(Scheduler scheduler, java.util.function.ToIntFunction<Scheduler.Key> limit) {
        owner.check();
        Batch follower = fifos.isEmpty() ? null : nextFollowerBatch(scheduler, scheduler.hasWork(this::followed));
        return follower != null ? follower : new Batch(scheduler.next(limit, this::followed), null);
    }

    /**
     * {@code step}, built from {@code batch}, is about to run: a leader broadcasts it (and the step keeps its seq); a
     * follower records the batch as run. A follower step that leaves out a call of the leader's batch (refused KV
     * pages) is logged: its collectives will not match the leader's and fail within their timeout.
     */
    void submitting(Step step, Batch batch) {
        owner.check();
        if (batch.schedule() != null) {
            ran(batch.schedule());
            step.tpSeq = batch.schedule().specSeq();
            if (step.items.size() != batch.items().size() || java.util.Arrays.stream(step.refused).anyMatch(r -> r != null)) {
                log.error("batch {} of {}: this follower could not admit every call the leader runs",
                        step.tpSeq, step.key.node());
            }
        } else if (role(step.items.get(0)) == Role.LEADS) {
            step.tpSeq = lead(step);
        }
    }

    /** {@code step} completed (after the engine took its results): decisions owed and removals that waited go on. */
    void completed(Step step) {
        owner.check();
        if (step.tpSeq >= 0 && role(step.items.get(0)) == Role.LEADS) {
            ledStepDone(step, step.tpSeq);
        }
        release();
    }

    /** Whether this worker follows a leader for some node of {@code request}. */
    boolean follows(WorkerRequest request) {
        return rankOf(request) > 0;
    }

    /** Whether this worker leads a group for some node of {@code request}. */
    boolean leads(WorkerRequest request) {
        return rankOf(request) == 0;
    }

    /** This worker's rank in the first group of size 2+ of {@code request} that holds it; -1 when none. */
    private int rankOf(WorkerRequest request) {
        for (Map.Entry<Integer, List<String>> e : request.workerGraphToWorkers.entrySet()) {
            List<String> workers = e.getValue();
            if (workers.size() > 1 && graphs.containsKey(e.getKey()) && workers.contains(self.value())) {
                return workers.indexOf(self.value());
            }
        }
        return -1;
    }

    // ---- leader ----

    /**
     * Before a led step runs: its batch (the calls that run, in order) goes to every follower with the next seq.
     * Returns the seq.
     */
    private long lead(Step step) {
        owner.check();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < step.items.size(); i++) {
            if (step.refused[i] == null) {
                ids.add(step.items.get(i).request().requestId);
            }
        }
        long seq = nextSeq++;
        ids.forEach(id -> lastNamed.put(id, seq));
        ScheduleTPNode schedule = new ScheduleTPNode(step.key.node(), step.key.walk(), ids, seq);
        for (String follower : followersOf(step.items.get(0))) {
            outbox.toWorker(EntityId.parse(follower), WorkerMessage.of(schedule));
        }
        return seq;
    }

    /** After a led step completed: with speculation on, every lead step is followed by a decision, here "none". */
    private void ledStepDone(Step step, long seq) {
        owner.check();
        if (!speculation) {
            return;
        }
        TPNoSpeculation none = new TPNoSpeculation(step.key.node(), step.key.walk(), seq);
        for (String follower : followersOf(step.items.get(0))) {
            outbox.toWorker(EntityId.parse(follower), WorkerMessage.of(none));
        }
    }

    private static List<String> followersOf(ReadyItem item) {
        List<String> ranks = ranks(item);
        return ranks.subList(1, ranks.size());
    }

    // ---- follower ----

    void onSchedule(ScheduleTPNode schedule) {
        owner.check();
        if (schedule.speculative()) {
            // never sent by a leader of this version; running it would leave the batch sequence
            log.warn("speculative batch {} of {} ignored: this worker does not follow speculation yet",
                    schedule.specSeq(), schedule.nodeName());
            return;
        }
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
    private Batch nextFollowerBatch(Scheduler scheduler, boolean ownWork) {
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
            ScheduleTPNode head = queued.schedule();
            if (clock.getAsLong() - queued.arrivedNanos() > timeoutNanos && !satisfiable(scheduler, head)) {
                // the leader's collectives for it have timed out: its requests fail there, and their removals follow
                fifo.poll();
                droppedBatches++;
                log.warn("batch {} of {} dropped: not every request it names was ready here within {} ms",
                        head.specSeq(), head.nodeName(), timeoutNanos / 1_000_000);
                release();
                return nextFollowerBatch(scheduler, ownWork);
            }
            List<String> live = new ArrayList<>();
            String model = null;
            boolean waiting = false;
            for (String id : head.requestIds()) {
                WorkerRequest request = requests.get(id);
                if (request == null && !gone.test(id)) {
                    waiting = true; // its NewRequest has not come yet
                    break;
                }
                if (request == null || !request.schedulable()) {
                    continue;
                }
                model = request.model;
                live.add(id);
            }
            if (waiting) {
                continue;
            }
            List<ReadyItem> items = live.isEmpty() ? List.of()
                    : scheduler.takeExactly(new Scheduler.Key(model, head.nodeName(), head.graphWalk()), live);
            if (items == null) {
                continue; // not every request is ready for the node yet
            }
            fifo.poll();
            if (live.size() < head.requestIds().size()) {
                skippedCalls += head.requestIds().size() - live.size();
                log.warn("batch {} of {}: {} of its requests failed or left here; the rest run", head.specSeq(),
                        head.nodeName(), head.requestIds().size() - live.size());
            }
            if (items.isEmpty()) {
                ran(head);
                release();
                continue;
            }
            lastRanFollowerBatch = true;
            followerBatches++;
            return new Batch(items, head);
        }
        lastRanFollowerBatch = false;
        return null;
    }

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

    /** Whether a turn now could start a batch: own work is ready, or a FIFO head's requests all are. */
    boolean couldRun(Scheduler scheduler) {
        owner.check();
        if (scheduler.hasWork(this::followed)) {
            return true;
        }
        for (ArrayDeque<Queued> fifo : fifos.values()) {
            Queued head = fifo.peek();
            if (head != null && (satisfiable(scheduler, head.schedule())
                    || clock.getAsLong() - head.arrivedNanos() > timeoutNanos)) {
                return true;
            }
        }
        return false;
    }

    private boolean satisfiable(Scheduler scheduler, ScheduleTPNode head) {
        List<String> live = new ArrayList<>();
        String model = null;
        for (String id : head.requestIds()) {
            WorkerRequest request = requests.get(id);
            if (request == null && !gone.test(id)) {
                return false;
            }
            if (request != null && request.schedulable()) {
                model = request.model;
                live.add(id);
            }
        }
        return live.isEmpty() || scheduler.hasExactly(new Scheduler.Key(model, head.nodeName(), head.graphWalk()), live);
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
                remove.accept(request);
            }
        }
    }

    // ---- both ----

    /**
     * {@code request} leaves this worker: a leader relays the removal to its followers (after the last batch that named
     * it); a follower forgets what it kept for it.
     */
    void removed(WorkerRequest request) {
        owner.check();
        String id = request.requestId;
        Long last = lastNamed.remove(id);
        ranFor.remove(id);
        drainsOwed.remove(id);
        removalDeadlines.remove(id);
        for (Map.Entry<Integer, List<String>> e : request.workerGraphToWorkers.entrySet()) {
            List<String> workers = e.getValue();
            if (workers.size() > 1 && graphs.containsKey(e.getKey()) && workers.get(0).equals(self.value())) {
                RemoveRequest relay = new RemoveRequest(id, MessageSource.TP_RANK_0, last == null ? -1 : last);
                for (String follower : workers.subList(1, workers.size())) {
                    outbox.toWorker(EntityId.parse(follower), WorkerMessage.of(relay));
                }
                return;
            }
        }
    }

    /** Batches taken from the leader, and calls of them skipped because their request failed or left here. */
    long followerBatches() {
        return followerBatches;
    }

    long skippedCalls() {
        return skippedCalls;
    }

    /** Leader batches queued here and not run yet (all nodes). */
    int queuedBatches() {
        return fifos.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    /** Leader batches a follower dropped because they could not start within the timeout. */
    long droppedBatches() {
        return droppedBatches;
    }
}
