package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.SamplingConfig;
import io.mstar.wire.WorkerErrorType;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.KvCacheException;
import io.mstar.worker.kv.PageAllocatorStats;
import io.mstar.worker.kv.TokenSampler;

/**
 * The engine's KV caches (docs/streaming-and-kv.md): one {@link KvCache} per autoregressive node
 * ({@link KvCacheKernel}) this worker runs, on the worker's device, sized by the model's {@code kv_cache} settings.
 * A node's pool is taken at its first batch, so a worker that never runs the node holds none. Before each step it
 * reserves each call's positions (OUT_OF_PAGES fails that call alone, which then is not run), a voided speculated
 * step's reservations are {@linkplain #rollback taken back}, and {@link #release} frees a request's pages in every
 * cache exactly once. Publishes {@code mstar.worker.kv.pages{model,node,state=used|free}}
 * and {@code mstar.worker.kv.pool} (bytes).
 * Owned by the engine loop; gauges read values it publishes.
 */
public final class KvCaches implements AutoCloseable {

    static final String KV_PAGES = "mstar.worker.kv.pages";
    static final String KV_POOL = "mstar.worker.kv.pool";

    private static final class NodeCache {
        final KvCache cache;
        final List<Meter> meters = new ArrayList<>();
        volatile int used;
        volatile int free;

        NodeCache(KvCache cache) {
            this.cache = cache;
            publish();
        }

        void publish() {
            PageAllocatorStats stats = cache.stats();
            used = stats.pagesInUse();
            free = stats.freePages();
        }
    }

    private final Map<String, KvCacheConfig> configs;
    private final MeterRegistry registry;
    private final Map<String, NodeCache> caches = new LinkedHashMap<>();
    private final TokenSampler sampler = new TokenSampler();

    /**
     * @param configs  model name to its {@code kv_cache} settings
     * @param registry where the page gauges go; null registers none
     */
    public KvCaches(Map<String, KvCacheConfig> configs, MeterRegistry registry) {
        this.configs = Map.copyOf(configs);
        this.registry = registry;
    }

    /** The {@code kv_cache} settings of every model of {@code config}. */
    public static KvCaches of(DeploymentConfig config, MeterRegistry registry) {
        Map<String, KvCacheConfig> configs = new LinkedHashMap<>();
        config.models().forEach(m -> m.kvCache().ifPresent(kv -> configs.put(m.name(), kv)));
        return new KvCaches(configs, registry);
    }

    /** No model with a KV cache. */
    public static KvCaches none() {
        return new KvCaches(Map.of(), null);
    }

    /**
     * Reserves {@code tokens[i]} positions for each call in the node's cache, on the loop before the step is
     * submitted. Answers one
     * {@link KvStep} per call, null where the positions did not fit; {@code refused} gets that call's failed result
     * (OUT_OF_PAGES: that request only, and it is not run).
     */
    List<KvStep> reserve(String model, String node, KvCacheKernel kernel, Device device, List<NodeCall> calls,
            int[] tokens, NodeResult[] refused) {
        return reserve(model, node, kernel, device, calls, tokens, refused, false);
    }

    /**
     * ... {@code heldPagesOnly}: a speculated step's reservations, which take no page (a call that would need one is
     * refused, without counting as an exhaustion), so speculating never takes a page a request about to run needs.
     */
    List<KvStep> reserve(String model, String node, KvCacheKernel kernel, Device device, List<NodeCall> calls,
            int[] tokens, NodeResult[] refused, boolean heldPagesOnly) {
        NodeCache c = cacheFor(model, node, kernel, device);
        KvCache cache = c.cache;
        List<KvStep> steps = new ArrayList<>(calls.size());
        try {
            for (int i = 0; i < calls.size(); i++) {
                NodeCall call = calls.get(i);
                String id = call.requestId();
                if (!cache.contains(id)) {
                    cache.addRequest(id);
                }
                int n = tokens[i];
                if (heldPagesOnly && !cache.fitsInHeldPages(id, n)) {
                    refused[i] = NodeResult.failed(WorkerErrorType.KERNEL_FAILED, "no held page for a speculated step");
                    steps.add(null);
                    continue;
                }
                int first;
                try {
                    first = cache.appendTokens(id, n);
                } catch (KvCacheException e) {
                    refused[i] = NodeResult.failed(e);
                    steps.add(null);
                    continue;
                }
                steps.add(new KvStep(id, cache.pool(), cache.layout(), cache.pages(id), first, n, sampling(call, node),
                        call.info().randomSeed(), sampler));
            }
            return steps;
        } finally {
            c.publish();
        }
    }

    /**
     * Takes back what {@code step} reserved: its request stopped before a speculated step's outputs were used. A
     * request whose pages were released already has nothing to take back.
     */
    void rollback(String model, String node, KvStep step) {
        NodeCache c = caches.get(model + "/" + node);
        if (c != null && c.cache.contains(step.requestId())
                && c.cache.tokenCount(step.requestId()) == step.sequenceLength()) {
            c.cache.truncate(step.requestId(), step.firstPosition());
            c.publish();
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
        NodeCache created = new NodeCache(new KvCache(device, config, kernel.bytesPerToken()));
        caches.put(key, created);
        if (registry != null) {
            // Tagged by model too: the cache is per (model, node), and two models may name a node alike.
            created.meters.add(Gauge.builder(KV_PAGES, created, c -> c.used).tag("model", model).tag("node", node)
                    .tag("state", "used").description("KV-cache pages by state, per node").register(registry));
            created.meters.add(Gauge.builder(KV_PAGES, created, c -> c.free).tag("model", model).tag("node", node)
                    .tag("state", "free").description("KV-cache pages by state, per node").register(registry));
            // The pool is device memory held for the worker's life, not by requests: leak checks subtract it.
            long poolBytes = created.cache.layout().poolBytes();
            created.meters.add(Gauge.builder(KV_POOL, () -> poolBytes).tag("model", model).tag("node", node)
                    .baseUnit("bytes").description("Device bytes the KV-cache pool holds, per node").register(registry));
        }
        return created;
    }

    /** Frees the request's pages in every cache that holds some; a request released before is not touched again. */
    void release(String requestId) {
        for (NodeCache c : caches.values()) {
            if (c.cache.contains(requestId)) {
                c.cache.releaseRequest(requestId);
                c.publish();
            }
        }
    }

    private void publish() {
        caches.values().forEach(NodeCache::publish);
    }

    /** Page stats by {@code model/node}; on the engine loop only. */
    public Map<String, PageAllocatorStats> stats() {
        Map<String, PageAllocatorStats> stats = new LinkedHashMap<>();
        caches.forEach((key, c) -> stats.put(key, c.cache.stats()));
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
