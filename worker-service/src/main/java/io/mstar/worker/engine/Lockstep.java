package io.mstar.worker.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.graph.WorkerGraph;
import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.wire.MessageSource;
import io.mstar.wire.OffloadDelta;
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
 * it ran that batch. Each batch carries the leader's KV moves since the one before ({@code resident_delta}), which a
 * follower replays first; a follower never chooses a victim itself. With speculation on, the leader may broadcast the
 * step it speculated on a running one ({@code speculative}, {@code spec_from_seq}); after every lead step that ran,
 * exactly one of that broadcast and a {@link TPNoSpeculation} went out. The follower's side is
 * {@link LockstepFollower}. Owned by the engine loop.
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

    /** The next batch to build: ready items, and the leader's message when it is a follower's batch (else null). */
    record Batch(List<ReadyItem> items, ScheduleTPNode schedule) {
    }

    private final OwnerThread owner;
    private final EntityId self;
    private final Map<Integer, WorkerGraph> graphs;
    private final Outbox outbox;
    private final KvCaches kv;
    private final boolean speculation;
    private final Map<Scheduler.Key, Role> roles = new HashMap<>();
    // leader
    private long nextSeq;
    private final Map<String, Long> lastNamed = new HashMap<>();
    /** Lead steps a speculated step was broadcast on: their decision went out, no TPNoSpeculation follows them. */
    private final Set<Long> speculatedOn = new HashSet<>();
    private final LockstepFollower follower;

    Lockstep(OwnerThread owner, EntityId self, Map<Integer, WorkerGraph> graphs, Map<String, WorkerRequest> requests,
            Outbox outbox, KvCaches kv, EngineMeters meters, boolean speculation, Duration timeout, LongSupplier clock,
            Predicate<String> gone, Consumer<WorkerRequest> remove, Consumer<WorkerRequest> readsDone) {
        this.owner = owner;
        this.self = self;
        this.graphs = graphs;
        this.outbox = outbox;
        this.kv = kv;
        this.speculation = speculation;
        this.follower = new LockstepFollower(owner, requests, kv, meters, timeout, clock, gone, remove, readsDone);
    }

    /** The follower's side: its FIFOs, parked removals, owed drains and bounded waits. */
    LockstepFollower follower() {
        return follower;
    }

    /** The workers of the worker graph that runs {@code item}'s node for its request, rank 0 first. */
    private static List<String> ranks(ReadyItem item) {
        return item.request().workersOf(item.pass(), item.node().node.name());
    }

    /** This worker's role for {@code item}'s key: the same for every item of it, so worked out once. */
    private Role role(ReadyItem item) {
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

    /**
     * The next batch: a follower batch ({@link LockstepFollower#next}), else the scheduler's choice among the keys
     * this worker schedules itself; empty when nothing is ready. The role of the batch's key is known from here on:
     * {@link #busy} and {@link #inLockstep} read it while the batch is built, runs and waits for pages.
     *
     * @param fitsFreePages whether ready items' calls fit the free KV pages: a follower batch runs whole or waits
     */
    Batch next(Scheduler scheduler, ToIntFunction<Scheduler.Key> limit, Predicate<List<ReadyItem>> fitsFreePages) {
        owner.check();
        Batch led = follower.idle() ? null
                : follower.next(scheduler, scheduler.hasWork(this::followed), fitsFreePages);
        Batch batch = led != null ? led : new Batch(scheduler.next(limit, this::followed), null);
        if (!batch.items().isEmpty()) {
            role(batch.items().get(0));
        }
        return batch;
    }

    /**
     * {@code step}, built from {@code batch}, is about to run: a leader broadcasts it (and the step keeps its seq); a
     * follower's step keeps the seq of the leader's batch (the follower marked it run as it took it). A follower step
     * that leaves out a call of the leader's batch (refused KV pages) is logged: its collectives will not match the
     * leader's and fail within their timeout.
     */
    void submitting(Step step, Batch batch) {
        owner.check();
        if (batch.schedule() != null) {
            step.tpSeq = batch.schedule().specSeq();
            if (step.items.size() != batch.items().size() || Arrays.stream(step.refused).anyMatch(r -> r != null)) {
                log.error("batch {} of {}: this follower could not admit every call the leader runs",
                        step.tpSeq, step.key.node());
            }
        } else if (roles.get(step.key) == Role.LEADS) {
            step.tpSeq = lead(step, -1);
        }
    }

    /**
     * The executor took {@code next}, speculated on the running {@code on}: a leader broadcasts it as speculative from
     * {@code on}'s seq. Sent once the executor holds it, never before: a batch the leader might not run must not reach
     * a follower. A follower finds out for itself if the leader voids it ({@link LockstepFollower#closed}).
     */
    void speculating(Step on, Step next) {
        owner.check();
        if (roles.get(next.key) == Role.LEADS && on.tpSeq >= 0) {
            speculatedOn.add(on.tpSeq);
            next.tpSeq = lead(next, on.tpSeq);
        }
    }

    /** {@code step} completed (after the engine took its results): decisions owed and removals that waited go on. */
    void completed(Step step) {
        owner.check();
        if (step.tpSeq >= 0 && roles.get(step.key) == Role.LEADS) {
            ledStepDone(step, step.tpSeq);
        } else if (step.tpSeq >= 0 && roles.get(step.key) == Role.FOLLOWS) {
            follower.closed(step);
        }
        follower.release();
    }

    /** Whether this worker follows a leader for some node of {@code request}. */
    boolean follows(WorkerRequest request) {
        return groupOf(request).indexOf(self.value()) > 0;
    }

    /** The workers of the first tensor-parallel group of {@code request} that holds this worker; empty when none. */
    private List<String> groupOf(WorkerRequest request) {
        for (Map.Entry<Integer, List<String>> e : request.workerGraphToWorkers.entrySet()) {
            List<String> workers = e.getValue();
            if (workers.size() > 1 && graphs.containsKey(e.getKey()) && workers.contains(self.value())) {
                return workers;
            }
        }
        return List.of();
    }

    // ---- leader ----

    /**
     * Before a led step runs: its batch (the calls that run, in order) goes to every follower with the next seq,
     * speculative on {@code from} when that is a seq. Returns the seq.
     */
    private long lead(Step step, long from) {
        owner.check();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < step.items.size(); i++) {
            if (step.refused[i] == null) {
                ids.add(step.items.get(i).request().requestId);
            }
        }
        long seq = nextSeq++;
        ids.forEach(id -> lastNamed.put(id, seq));
        // the KV moves made since the last broadcast (this step's reservations made room): followers replay them first
        OffloadDelta journal = kv.journal(step.key.model(), step.key.node());
        OffloadDelta moves = journal == null ? OffloadDelta.newDelta() : journal.take();
        for (String follower : followersOf(step.items.get(0))) {
            outbox.toWorker(EntityId.parse(follower), WorkerMessage.of(new ScheduleTPNode(step.key.node(),
                    step.key.walk(), ids, from >= 0, seq, from, moves.copy())));
        }
        return seq;
    }

    /**
     * After a led step completed: with speculation on, every lead step is followed by one decision; unless a step
     * speculated on it was broadcast, it is "none".
     */
    private void ledStepDone(Step step, long seq) {
        owner.check();
        if (!speculation || speculatedOn.remove(seq)) {
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

    /**
     * The requests a reservation for {@code key} may offload to make room: none on a follower, which takes the
     * leader's moves instead of choosing its own; else those {@code busy} does not hold.
     */
    Predicate<String> busy(Scheduler.Key key, Predicate<String> busy) {
        return roles.get(key) == Role.FOLLOWS ? id -> true : busy;
    }

    /** Whether this worker follows the leader's batches for {@code key}: it never speculates them itself. */
    boolean follows(Scheduler.Key key) {
        return roles.get(key) == Role.FOLLOWS;
    }

    /** Whether {@code key} runs in lockstep here: its KV moves only by journalled moves (no recompute drops). */
    boolean inLockstep(Scheduler.Key key) {
        Role role = roles.get(key);
        return role != null && role != Role.ALONE;
    }

    /** As {@link #couldRun}, leaving out {@code key}'s own ready items: other work waits for a turn. */
    boolean couldRunBesides(Scheduler scheduler, Scheduler.Key key) {
        owner.check();
        return scheduler.hasWork(item -> followed(item) || Scheduler.key(item).equals(key))
                || follower.couldRun(scheduler);
    }

    /** Whether a turn now could start a batch: own work is ready, or a FIFO head's requests all are. */
    boolean couldRun(Scheduler scheduler) {
        owner.check();
        return scheduler.hasWork(this::followed) || follower.couldRun(scheduler);
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
        follower.forget(id);
        List<String> group = groupOf(request);
        if (!group.isEmpty() && group.get(0).equals(self.value())) {
            RemoveRequest relay = new RemoveRequest(id, MessageSource.TP_RANK_0, last == null ? -1 : last);
            for (String rank : group.subList(1, group.size())) {
                outbox.toWorker(EntityId.parse(rank), WorkerMessage.of(relay));
            }
        }
    }

}
