package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.wire.OffloadDelta;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.KvCacheLayout;
import io.mstar.worker.kv.KvMoves;
import io.mstar.worker.kv.PageAllocatorStats;
import io.mstar.worker.kv.TokenSampler;

/**
 * The engine's KV caches (docs/streaming-and-kv.md): one {@link KvCache} per autoregressive node
 * ({@link KvCacheKernel}) this worker runs, on the worker's device, sized by the model's {@code kv_cache} settings,
 * with a host page pool of {@code kv-host-pool-factor} times its pages. A node's pool is taken at its first batch, so
 * a worker that never runs the node holds none.
 *
 * <p>Admission by pages ({@link #reserve}): before a step, each call's positions are reserved when the device pages
 * its step needs are free or can be freed by offloading other requests (least recently run first, the most pages on
 * a tie, never one a step holds or one admitted to this step); a call that cannot be admitted now is deferred, and one
 * that can never fit fails at once ({@code kv_capacity_exceeded}). An offloaded request is reloaded, all or nothing,
 * when it is next admitted. Every move is journalled ({@link KvMoves}). A voided speculated step's reservations are
 * {@linkplain #rollback taken back}, and {@link #release} frees a request's pages, wherever they are, exactly once.
 *
 * <p>Publishes {@code mstar.worker.kv.pages{model,node,state=used|free|offloaded|host_free}},
 * {@code mstar.worker.kv.pool} (bytes), {@code mstar.worker.kv.moves{model,node,move=offload|reload}} and
 * {@code mstar.worker.kv.page.wait} (time a request waited for pages) and {@code mstar.worker.kv.waiting} (requests
 * waiting for pages now). Owned by the engine loop; gauges read values
 * it publishes.
 */
public final class KvCaches implements AutoCloseable {

    static final String KV_PAGES = "mstar.worker.kv.pages";
    static final String KV_POOL = "mstar.worker.kv.pool";
    static final String KV_MOVES = "mstar.worker.kv.moves";
    static final String KV_PAGE_WAIT = "mstar.worker.kv.page.wait";
    static final String KV_WAITING = "mstar.worker.kv.waiting";
    /** Host pages per device page when the worker does not say ({@code mstar.worker.engine.kv-host-pool-factor}). */
    public static final double DEFAULT_HOST_POOL_FACTOR = 4.0;

    private static final class NodeCache {
        final KvCache cache;
        final KvMoves moves;
        final List<Meter> meters = new ArrayList<>();
        /** When each request holding pages last ran here (a turn count), for the victim order. */
        final Map<String, Long> lastRun = new HashMap<>();
        /** When each request holding pages arrived here, for the youngest to preempt by recompute. */
        final Map<String, Long> arrival = new HashMap<>();
        /** Requests whose pages were dropped to be recomputed (read by the counter). */
        volatile long recomputes;
        Timer pageWait;
        volatile int used;
        volatile int free;
        volatile int offloaded;
        volatile int hostFree;
        /** Requests whose step waits for pages now (written on the loop, read by the gauge). */
        volatile int waiting;

        NodeCache(KvCache cache) {
            this.cache = cache;
            this.moves = new KvMoves(cache);
            publish();
        }

        void publish() {
            PageAllocatorStats stats = cache.stats();
            PageAllocatorStats host = cache.hostStats();
            used = stats.pagesInUse();
            free = stats.freePages();
            offloaded = host.pagesInUse();
            hostFree = host.freePages();
        }
    }

    private final Map<String, KvCacheConfig> configs;
    private final MeterRegistry registry;
    private final double hostPoolFactor;
    private final Map<String, NodeCache> caches = new LinkedHashMap<>();
    private final TokenSampler sampler = new TokenSampler();
    private long turns;
    private long arrivals;
    private long pagesFreedEvents;

    /**
     * @param configs  model name to its {@code kv_cache} settings
     * @param registry where the page gauges go; null registers none
     */
    public KvCaches(Map<String, KvCacheConfig> configs, MeterRegistry registry) {
        this(configs, registry, DEFAULT_HOST_POOL_FACTOR);
    }

    /** @param hostPoolFactor host pages per device page of each cache (0: no offload) */
    public KvCaches(Map<String, KvCacheConfig> configs, MeterRegistry registry, double hostPoolFactor) {
        if (!(hostPoolFactor >= 0) || Double.isInfinite(hostPoolFactor)) {
            throw new IllegalArgumentException("mstar.worker.engine.kv-host-pool-factor must be a finite number >= 0, was "
                    + hostPoolFactor);
        }
        this.configs = Map.copyOf(configs);
        this.registry = registry;
        this.hostPoolFactor = hostPoolFactor;
    }

    /** The {@code kv_cache} settings of every model of {@code config}. */
    public static KvCaches of(DeploymentConfig config, MeterRegistry registry) {
        return of(config, registry, DEFAULT_HOST_POOL_FACTOR);
    }

    public static KvCaches of(DeploymentConfig config, MeterRegistry registry, double hostPoolFactor) {
        Map<String, KvCacheConfig> configs = new LinkedHashMap<>();
        config.models().forEach(m -> m.kvCache().ifPresent(kv -> configs.put(m.name(), kv)));
        return new KvCaches(configs, registry, hostPoolFactor);
    }

    /** No model with a KV cache. */
    public static KvCaches none() {
        return new KvCaches(Map.of(), null);
    }

    /**
     * Reserves {@code tokens[i]} positions for each call in the node's cache, on the loop before the step is
     * submitted, admitting a call only when its pages fit or can be made to (see the class comment). Answers one
     * {@link KvStep} per call, null where it was not admitted: {@code refused} gets the failed result of a call that
     * can never fit, {@code deferred} marks one that waits for pages.
     *
     * @param busy whether a step holds a request (never a victim: the step reads its pages)
     */
    List<KvStep> reserve(String model, String node, KvCacheKernel kernel, Device device, List<NodeCall> calls,
            int[] tokens, NodeResult[] refused, boolean[] deferred, Predicate<String> busy) {
        NodeCache c = cacheFor(model, node, kernel, device);
        KvCache cache = c.cache;
        KvCacheLayout layout = cache.layout();
        List<KvStep> steps = new ArrayList<>(calls.size());
        Set<String> admitted = new HashSet<>();
        long turn = ++turns;
        try {
            for (int i = 0; i < calls.size(); i++) {
                NodeCall call = calls.get(i);
                String id = call.requestId();
                int n = tokens[i];
                if (!cache.contains(id)) {
                    long most = (long) n + Math.max(0, call.info().maxTokens());
                    if (layout.pagesFor(most) > layout.maxNumPages()) {
                        refused[i] = NodeResult.failed(WorkerErrorType.KV_CAPACITY_EXCEEDED, "request " + id
                                + " can never fit node " + node + "'s KV cache: up to " + most + " KV positions (" + n
                                + " now, max_tokens " + call.info().maxTokens() + ") take " + layout.pagesFor(most)
                                + " pages of " + layout.pageSize() + " and the pool has " + layout.maxNumPages()
                                + " pages");
                        steps.add(null);
                        continue;
                    }
                    cache.addRequest(id);
                    c.arrival.put(id, ++arrivals);
                }
                int need = cache.devicePagesNeeded(id, n);
                if (need > cache.freePages()) {
                    admitted.add(id); // never its own victim
                    makeRoom(c, need, admitted, busy);
                    admitted.remove(id);
                }
                if (need > cache.freePages() || cache.isOffloaded(id) && !c.moves.reload(id)) {
                    deferred[i] = true;
                    steps.add(null);
                    continue;
                }
                boolean recompute = cache.isDropped(id);
                int first = cache.appendTokens(id, n);
                admitted.add(id);
                c.lastRun.put(id, turn);
                steps.add(step(cache, call, node, first, n, recompute ? cache.fed(id, first) : null));
            }
            return steps;
        } finally {
            c.publish();
        }
    }

    /** Whether {@code tokens[i]} more positions for each call fit the node's free device pages, reserving nothing. */
    boolean fitFreePages(String model, String node, KvCacheKernel kernel, Device device, List<NodeCall> calls,
            int[] tokens) {
        KvCache cache = cacheFor(model, node, kernel, device).cache;
        long need = 0;
        for (int i = 0; i < calls.size(); i++) {
            String id = calls.get(i).requestId();
            need += cache.contains(id) ? cache.devicePagesNeeded(id, tokens[i]) : cache.layout().pagesFor(tokens[i]);
        }
        return need <= cache.freePages();
    }

    /**
     * A speculated step's reservations: positions within pages the request holds on the device, or, with
     * {@code takeFree}, in pages free now (no victim is ever moved for them); a call that does not fit so, or whose
     * request is offloaded, dropped or new here, is left out with a null.
     */
    List<KvStep> reserveSpeculated(String model, String node, KvCacheKernel kernel, Device device,
            List<NodeCall> calls, int[] tokens, boolean takeFree) {
        NodeCache c = cacheFor(model, node, kernel, device);
        List<KvStep> steps = new ArrayList<>(calls.size());
        try {
            for (int i = 0; i < calls.size(); i++) {
                NodeCall call = calls.get(i);
                String id = call.requestId();
                boolean fits = c.cache.fitsInHeldPages(id, tokens[i]) || takeFree && c.cache.contains(id)
                        && !c.cache.isOffloaded(id) && !c.cache.isDropped(id)
                        && c.cache.devicePagesNeeded(id, tokens[i]) <= c.cache.freePages();
                if (!fits) {
                    steps.add(null);
                    continue;
                }
                int first = c.cache.appendTokens(id, tokens[i]);
                steps.add(step(c.cache, call, node, first, tokens[i], null));
            }
            return steps;
        } finally {
            c.publish();
        }
    }

    private KvStep step(KvCache cache, NodeCall call, String node, int first, int n, int[] refeed) {
        String id = call.requestId();
        return new KvStep(id, cache.pool(), cache.layout(), cache.pages(id), first, n, sampling(call, node),
                call.info().randomSeed(), sampler, cache.residentLease(id), refeed, new int[n]);
    }

    /** Keeps the token ids a completed step fed (what a dropped request is recomputed from). */
    void fed(String model, String node, KvStep step) {
        NodeCache c = caches.get(model + "/" + node);
        if (c != null && c.cache.contains(step.requestId())) {
            c.cache.recordFed(step.requestId(), step.firstPosition(), step.fed());
        }
    }

    /**
     * Preemption by recompute (docs/streaming-and-kv.md#preemption-by-recompute): drops the device pages of the
     * youngest of {@code candidates} (the last to arrive at the node) that holds some, keeping its fed tokens so that
     * its next step recomputes its KV. Answers the request dropped, or null when none of them holds a device page.
     */
    String dropYoungest(String model, String node, Set<String> candidates) {
        NodeCache c = caches.get(model + "/" + node);
        if (c == null) {
            return null;
        }
        String youngest = null;
        for (String id : candidates) {
            if (holdsDevicePages(c.cache, id)
                    && (youngest == null || c.arrival.get(id) > c.arrival.get(youngest))) {
                youngest = id;
            }
        }
        if (youngest != null && c.cache.drop(youngest)) {
            c.recomputes++;
            pagesFreedEvents++;
            c.publish();
            return youngest;
        }
        return null;
    }

    /** Offloads victims until {@code need} device pages are free or no victim is left that the host pool takes. */
    private void makeRoom(NodeCache c, int need, Set<String> admitted, Predicate<String> busy) {
        KvCache cache = c.cache;
        List<String> victims = new ArrayList<>();
        for (String id : cache.requestIds()) {
            if (!admitted.contains(id) && !busy.test(id) && holdsDevicePages(cache, id)) {
                victims.add(id);
            }
        }
        victims.sort(Comparator.<String>comparingLong(id -> c.lastRun.getOrDefault(id, 0L))
                .thenComparing(Comparator.comparingInt(cache::pageCount).reversed()).thenComparing(id -> id));
        for (String victim : victims) {
            if (cache.freePages() >= need) {
                return;
            }
            if (c.moves.offload(victim)) {
                pagesFreedEvents++;
            }
        }
    }

    /**
     * Takes back what {@code step} reserved: its request stopped before a speculated step's outputs were used. A
     * request whose pages were released already has nothing to take back.
     */
    void rollback(String model, String node, KvStep step) {
        NodeCache c = caches.get(model + "/" + node);
        if (c != null && c.cache.contains(step.requestId()) && !c.cache.isOffloaded(step.requestId())
                && !c.cache.isDropped(step.requestId()) && c.cache.tokenCount(step.requestId()) == step.sequenceLength()) {
            if (c.cache.truncate(step.requestId(), step.firstPosition()) > 0) {
                pagesFreedEvents++;
            }
            c.publish();
        }
    }

    /** A request's step started waiting for pages of {@code model}'s {@code node}. */
    void waitStarted(String model, String node) {
        NodeCache c = caches.get(model + "/" + node);
        if (c != null) {
            c.waiting++;
        }
    }

    /** A request stopped waiting for pages without being admitted (it ended, failed or left the node). */
    void waitEnded(String model, String node) {
        NodeCache c = caches.get(model + "/" + node);
        if (c != null && c.waiting > 0) {
            c.waiting--;
        }
    }

    /** A request admitted after waiting {@code nanos} for pages. */
    void waited(String model, String node, long nanos) {
        waitEnded(model, node);
        NodeCache c = caches.get(model + "/" + node);
        if (c != null && c.pageWait != null) {
            c.pageWait.record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    private static SamplingConfig sampling(NodeCall call, String node) {
        MultiSamplingConfig config = call.info().samplingConfig().get(node);
        return config == null ? SamplingConfig.DEFAULT : config.main();
    }

    private NodeCache cacheFor(String model, String node, KvCacheKernel kernel, Device device) {
        String key = model + "/" + node;
        NodeCache existing = caches.get(key);
        if (existing != null) {
            return existing;
        }
        KvCacheConfig config = configs.get(model);
        if (config == null) {
            throw new EngineException(EngineException.Reason.UNSUPPORTED_GRAPH, "node '" + node + "' of model '" + model
                    + "' keeps a KV cache but the deployment gives the model no kv_cache settings");
        }
        KvCacheLayout layout = KvCacheLayout.of(config, kernel.bytesPerToken());
        int hostPages = Math.toIntExact(Math.round(hostPoolFactor * layout.maxNumPages()));
        NodeCache created = new NodeCache(new KvCache(device, layout, hostPages));
        caches.put(key, created);
        if (registry != null) {
            register(created, model, node);
        }
        return created;
    }

    private void register(NodeCache c, String model, String node) {
        // Tagged by model too: the cache is per (model, node), and two models may name a node alike.
        String pages = "KV-cache pages by state, per node (offloaded and host_free: its host pool)";
        c.meters.add(Gauge.builder(KV_PAGES, c, x -> x.used).tag("model", model).tag("node", node)
                .tag("state", "used").description(pages).register(registry));
        c.meters.add(Gauge.builder(KV_PAGES, c, x -> x.free).tag("model", model).tag("node", node)
                .tag("state", "free").description(pages).register(registry));
        c.meters.add(Gauge.builder(KV_PAGES, c, x -> x.offloaded).tag("model", model).tag("node", node)
                .tag("state", "offloaded").description(pages).register(registry));
        c.meters.add(Gauge.builder(KV_PAGES, c, x -> x.hostFree).tag("model", model).tag("node", node)
                .tag("state", "host_free").description(pages).register(registry));
        // The pool is device memory held for the worker's life, not by requests: leak checks subtract it.
        long poolBytes = c.cache.layout().poolBytes();
        c.meters.add(Gauge.builder(KV_POOL, () -> poolBytes).tag("model", model).tag("node", node)
                .baseUnit("bytes").description("Device bytes the KV-cache pool holds, per node").register(registry));
        String moves = "Requests' KV pages moved between the device and the host pool, or dropped to be recomputed,"
                + " per node";
        c.meters.add(FunctionCounter.builder(KV_MOVES, c.moves, KvMoves::offloads).tag("model", model)
                .tag("node", node).tag("move", "offload").description(moves).register(registry));
        c.meters.add(FunctionCounter.builder(KV_MOVES, c.moves, KvMoves::reloads).tag("model", model)
                .tag("node", node).tag("move", "reload").description(moves).register(registry));
        c.meters.add(FunctionCounter.builder(KV_MOVES, c, x -> x.recomputes).tag("model", model)
                .tag("node", node).tag("move", "recompute").description(moves).register(registry));
        c.meters.add(Gauge.builder(KV_WAITING, c, x -> x.waiting).tag("model", model).tag("node", node)
                .baseUnit("requests").description("Requests whose step waits for KV pages now, per node")
                .register(registry));
        c.pageWait = Timer.builder(KV_PAGE_WAIT).tag("model", model).tag("node", node)
                .publishPercentileHistogram().minimumExpectedValue(java.time.Duration.ofMillis(1))
                .maximumExpectedValue(java.time.Duration.ofSeconds(60))
                .description("Time a request's step waited for KV pages before it was admitted").register(registry);
        c.meters.add(c.pageWait);
    }

    /** Frees the request's pages in every cache that holds some; a request released before is not touched again. */
    void release(String requestId) {
        for (NodeCache c : caches.values()) {
            if (c.cache.contains(requestId)) {
                c.cache.releaseRequest(requestId);
                c.lastRun.remove(requestId);
                c.arrival.remove(requestId);
                pagesFreedEvents++;
                c.publish();
            }
        }
    }

    /** Requests holding device pages of the node now (not offloaded). */
    Set<String> residentRequests(String model, String node) {
        NodeCache c = caches.get(model + "/" + node);
        Set<String> ids = new HashSet<>();
        if (c != null) {
            for (String id : c.cache.requestIds()) {
                if (holdsDevicePages(c.cache, id)) {
                    ids.add(id);
                }
            }
        }
        return ids;
    }

    /** Whether {@code id} has pages on the device now: neither offloaded nor dropped nor without any. */
    private static boolean holdsDevicePages(KvCache cache, String id) {
        return cache.contains(id) && !cache.isOffloaded(id) && cache.pageCount(id) > 0;
    }

    /** Counts page frees and moves: a request waiting for pages is offered again only when this changed. */
    long pagesFreedEvents() {
        return pagesFreedEvents;
    }

    /**
     * Replays a tensor-parallel leader's moves on this worker's cache of the node ({@link KvMoves#replay}): true once
     * every move is applied or moot, false while one cannot be made yet (it stays in {@code delta}). A node with no
     * cache here yet has nothing to move.
     */
    boolean replay(String model, String node, OffloadDelta delta) {
        NodeCache c = caches.get(model + "/" + node);
        if (c != null && c.moves.replay(delta) > 0) {
            pagesFreedEvents++;
            c.publish();
        }
        return delta.isEmpty();
    }

    /** Whether {@code id} holds its pages of the node on the device (not offloaded) here, or is not known here. */
    boolean residentOrUnknown(String model, String node, String id) {
        NodeCache c = caches.get(model + "/" + node);
        return c == null || !c.cache.contains(id) || !c.cache.isOffloaded(id);
    }

    /** The node's journal of moves ({@link KvMoves#journal}); null before its first batch. */
    OffloadDelta journal(String model, String node) {
        NodeCache c = caches.get(model + "/" + node);
        return c == null ? null : c.moves.journal();
    }

    /** Page stats by {@code model/node}; on the engine loop only. */
    public Map<String, PageAllocatorStats> stats() {
        Map<String, PageAllocatorStats> stats = new LinkedHashMap<>();
        caches.forEach((key, c) -> stats.put(key, c.cache.stats()));
        return stats;
    }

    /** Host pool page stats by {@code model/node}; on the engine loop only. */
    public Map<String, PageAllocatorStats> hostStats() {
        Map<String, PageAllocatorStats> stats = new LinkedHashMap<>();
        caches.forEach((key, c) -> stats.put(key, c.cache.hostStats()));
        return stats;
    }

    /** Requests holding pages, over all caches; on the engine loop only. */
    public int requestsHoldingPages() {
        return caches.values().stream().mapToInt(c -> c.cache.requestIds().size()).sum();
    }

    /** Device bytes the pools take; on the engine loop only. */
    public long poolBytes() {
        return caches.values().stream().mapToLong(c -> c.cache.layout().poolBytes()).sum();
    }

    /** Frees every pool (and with it every page); on the engine loop, at shutdown. */
    @Override
    public void close() {
        for (NodeCache c : caches.values()) {
            c.cache.close();
            if (registry != null) {
                c.meters.forEach(registry::remove);
            }
        }
        caches.clear();
    }
}
