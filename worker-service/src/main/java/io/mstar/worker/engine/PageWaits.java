package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.KvCacheKernel;

/**
 * Calls that could not get their KV pages (docs/streaming-and-kv.md#admission-by-pages): each waits, its node still
 * queued, and goes back in front of the ready set once pages were freed or moved since the waiting calls were last
 * offered. When nothing else will ever free a page (no step runs, nothing else is ready, and every request holding the
 * node's device pages is itself waiting), the youngest waiting request holding pages is preempted by recompute
 * (docs/streaming-and-kv.md#preemption-by-recompute), or, where the node's kernel cannot recompute, the youngest
 * waiting request fails {@code OUT_OF_PAGES} so the others go on. Also keeps each node's wait for the KV meters.
 * Owned by the engine loop: only {@link StepPipeline} calls it, from entry points that check the owner.
 */
final class PageWaits {

    private static final Logger log = LoggerFactory.getLogger(WorkerEngine.class);

    private final KernelCatalog kernels;
    private final Scheduler scheduler;
    private final KvCaches kv;
    private final StepPipeline.Callbacks engine;
    /** Nodes run in tensor-parallel lockstep: their KV moves only by journalled offloads, never a recompute drop. */
    private final Predicate<Scheduler.Key> lockstep;
    /** Oldest first. */
    private final List<ReadyItem> waiting = new ArrayList<>();
    private final Map<NodeState, Long> waitingSince = new IdentityHashMap<>();
    /** {@link KvCaches#pagesFreedEvents()} when the waiting calls were last offered. */
    private long offeredAt = -1;

    PageWaits(KernelCatalog kernels, Scheduler scheduler, KvCaches kv, StepPipeline.Callbacks engine,
            Predicate<Scheduler.Key> lockstep) {
        this.lockstep = lockstep;
        this.kernels = kernels;
        this.scheduler = scheduler;
        this.kv = kv;
        this.engine = engine;
    }

    /** {@code item} could not get its pages now. */
    void add(ReadyItem item) {
        waiting.add(item);
        if (waitingSince.putIfAbsent(item.node(), System.nanoTime()) == null) {
            Scheduler.Key key = Scheduler.key(item);
            kv.waitStarted(key.model(), key.node());
        }
    }

    int size() {
        return waiting.size();
    }

    /** Whether some call waits for pages: a speculated step then takes none of the free ones. */
    boolean any() {
        return !waitingSince.isEmpty();
    }

    /** {@code item} got its pages: its wait, if it waited, is over and timed. */
    void admitted(ReadyItem item) {
        Long since = waitingSince.remove(item.node());
        if (since != null) {
            Scheduler.Key key = Scheduler.key(item);
            kv.waited(key.model(), key.node(), System.nanoTime() - since);
        }
    }

    /**
     * Puts the waiting calls back in front of the ready set when pages were freed or moved since they were last
     * offered; with {@code stepRunning} false and nothing else ready, first breaks a wait nothing would end.
     */
    void offer(boolean stepRunning) {
        if (waiting.isEmpty()) {
            return;
        }
        waiting.removeIf(item -> {
            boolean gone = !engine.live(item.request()) || !item.request().schedulable();
            if (gone) {
                item.node().queued = false;
                stopWaiting(item);
            }
            return gone;
        });
        if (waiting.isEmpty()) {
            return;
        }
        if (kv.pagesFreedEvents() == offeredAt && !stepRunning && scheduler.queued() == 0) {
            Scheduler.Key key = Scheduler.key(waiting.get(0));
            Set<String> waitingIds = new HashSet<>();
            waiting.forEach(item -> waitingIds.add(item.request().requestId));
            if (waitingIds.containsAll(kv.residentRequests(key.model(), key.node())) && !recompute(key, waitingIds)) {
                ReadyItem youngest = waiting.remove(waiting.size() - 1);
                youngest.node().queued = false;
                stopWaiting(youngest);
                engine.fail(youngest.request(), WorkerErrorType.OUT_OF_PAGES, "every request holding node "
                        + key.node() + "'s KV pages waits for more and the host page pool has no room to offload one");
                return;
            }
        }
        if (kv.pagesFreedEvents() != offeredAt) {
            offeredAt = kv.pagesFreedEvents();
            scheduler.addFirst(waiting);
            waiting.clear();
        }
    }

    /**
     * Preempts the youngest waiting request holding the node's device pages by recompute, when the node's kernel can
     * recompute a request's KV from its fed tokens; false when it cannot or no waiting request holds a page.
     */
    private boolean recompute(Scheduler.Key key, Set<String> waitingIds) {
        if (!(kernels.model(key.model()).kernel(key.node()) instanceof KvCacheKernel kernel) || !kernel.recordsFeeds()
                || lockstep.test(key)) {
            return false;
        }
        String dropped = kv.dropYoungest(key.model(), key.node(), waitingIds);
        if (dropped != null) {
            log.debug("request {}: KV of node {} dropped, to be recomputed when it next runs", dropped, key.node());
        }
        return dropped != null;
    }

    /** {@code item} leaves the wait for pages without being admitted. */
    private void stopWaiting(ReadyItem item) {
        if (waitingSince.remove(item.node()) != null) {
            Scheduler.Key key = Scheduler.key(item);
            kv.waitEnded(key.model(), key.node());
        }
    }
}
