package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;

/**
 * Which configured workers are set up and alive. Owned by the lifecycle loop: every method checks that it
 * runs on the owner thread; other threads read {@link Snapshot}s the loop publishes.
 *
 * <p>Heard-from times are {@code System.nanoTime()} values passed in by the loop, so tests drive time.
 * A restart ({@link WorkerEvent#RESTARTED}) is noted (log, counter); the loop fails the requests the worker held.
 */
public final class WorkerRegistry {

    private static final Logger log = LoggerFactory.getLogger(WorkerRegistry.class);

    /** What other threads may read: each worker's state, incarnation and silence at publication time. */
    public record Snapshot(Map<EntityId, WorkerView> workers) {

        public Snapshot {
            workers = Map.copyOf(workers);
        }

        /** True when every configured worker is READY. */
        public boolean allReady() {
            return workers.values().stream().allMatch(w -> w.state() == WorkerLifecycle.READY);
        }

        /** Each worker's time since it was last heard from; workers never heard from are left out. */
        public Map<EntityId, Duration> silences() {
            Map<EntityId, Duration> silences = new LinkedHashMap<>();
            workers.forEach((id, view) -> {
                if (view.silentFor() != null) {
                    silences.put(id, view.silentFor());
                }
            });
            return silences;
        }

        public Map<EntityId, WorkerLifecycle> states() {
            Map<EntityId, WorkerLifecycle> states = new LinkedHashMap<>();
            workers.forEach((id, view) -> states.put(id, view.state()));
            return states;
        }
    }

    /** One worker as published; {@code incarnation} and {@code silentFor} are null before its first word. */
    public record WorkerView(WorkerLifecycle state, Incarnation incarnation, Duration silentFor) {
    }

    private static final class Entry {
        WorkerLifecycle state = WorkerLifecycle.STARTING;
        Incarnation incarnation;
        long lastHeardNanos;
    }

    private final Map<EntityId, Entry> workers = new LinkedHashMap<>();
    private final Set<String> unknownReported = new HashSet<>();
    private final Duration lossTimeout;
    private final WorkerRegistryMeters meters;
    private Thread owner;

    public WorkerRegistry(Collection<EntityId> configured, Duration lossTimeout, WorkerRegistryMeters meters) {
        for (EntityId id : configured) {
            workers.put(id, new Entry());
        }
        this.lossTimeout = lossTimeout;
        this.meters = meters;
    }

    /** Makes the calling thread the owner; called once by the lifecycle loop when it starts. */
    public void bindOwner() {
        owner = Thread.currentThread();
    }

    /**
     * A {@code SetupDone} from {@code workerId} with the sender's incarnation header, at {@code nowNanos}.
     * Returns the event applied, or null when the id is not a configured worker (logged once per id, ignored:
     * a worker of another deployment would have been dead-lettered on the config digest already).
     */
    public WorkerEvent onSetupDone(String workerId, Incarnation incarnation, long nowNanos) {
        checkOwner();
        EntityId id;
        try {
            id = EntityId.parse(workerId);
        } catch (IllegalArgumentException e) {
            id = null;
        }
        Entry entry = id == null ? null : workers.get(id);
        if (entry == null) {
            if (unknownReported.add(workerId)) {
                log.warn("SetupDone from '{}', which is not a worker of this deployment config; ignored", workerId);
            }
            return null;
        }
        WorkerEvent event = entry.incarnation == null || entry.incarnation.equals(incarnation)
                ? WorkerEvent.SETUP_DONE : WorkerEvent.RESTARTED;
        WorkerLifecycle before = entry.state;
        entry.state = before.next(event);
        if (event == WorkerEvent.RESTARTED) {
            meters.restarted(id);
            log.warn("{} restarted (incarnation {} -> {}): every request it held is gone", id, entry.incarnation, incarnation);
        } else if (before != WorkerLifecycle.READY) {
            log.info("{} is ready (incarnation {}, was {})", id, incarnation, before);
        }
        entry.incarnation = incarnation;
        entry.lastHeardNanos = nowNanos;
        return event;
    }

    /**
     * Declares LOST every READY worker silent for longer than the loss timeout at {@code nowNanos}; returns those
     * just declared lost.
     */
    public java.util.List<EntityId> expire(long nowNanos) {
        checkOwner();
        java.util.List<EntityId> lost = new java.util.ArrayList<>();
        for (Map.Entry<EntityId, Entry> e : workers.entrySet()) {
            Entry entry = e.getValue();
            if (entry.state == WorkerLifecycle.READY && nowNanos - entry.lastHeardNanos > lossTimeout.toNanos()) {
                entry.state = entry.state.next(WorkerEvent.TIMED_OUT);
                meters.lost(e.getKey());
                lost.add(e.getKey());
                log.warn("{} lost: nothing heard for {} ms (timeout {})", e.getKey(),
                        Duration.ofNanos(nowNanos - entry.lastHeardNanos).toMillis(), lossTimeout);
            }
        }
        return lost;
    }

    public WorkerLifecycle state(EntityId worker) {
        checkOwner();
        Entry entry = workers.get(worker);
        if (entry == null) {
            throw new IllegalArgumentException(worker + " is not a configured worker");
        }
        return entry.state;
    }

    /** An immutable copy for other threads. */
    public Snapshot snapshot(long nowNanos) {
        checkOwner();
        Map<EntityId, WorkerView> views = new LinkedHashMap<>();
        workers.forEach((id, entry) -> views.put(id, new WorkerView(entry.state, entry.incarnation,
                entry.incarnation == null ? null : Duration.ofNanos(nowNanos - entry.lastHeardNanos))));
        return new Snapshot(views);
    }

    private void checkOwner() {
        if (owner != Thread.currentThread()) {
            throw new IllegalStateException("the worker registry is owned by "
                    + (owner == null ? "no thread yet" : owner.getName()) + ", not " + Thread.currentThread().getName());
        }
    }
}
