package io.mstar.worker.kernel;

import java.util.List;

import io.mstar.tensor.device.Device;

/**
 * An autoregressive node (docs/architecture.md#worker-internals, docs/streaming-and-kv.md): the engine keeps one paged
 * {@link io.mstar.worker.kv.KvCache} per such node on the worker's device, sized by the model's {@code kv_cache}
 * settings and {@link #bytesPerToken()}. Before each batch it reserves {@link #tokensToAppend} positions per call
 * and hands the kernel, per call, a {@link KvStep}: the pool, the request's pages, the reserved slots and its sampling. A
 * request whose positions do not fit (OUT_OF_PAGES) fails alone and is not in the batch the kernel gets; its pages,
 * like every request's, are released once when it fails or is removed.
 */
public interface KvCacheKernel extends NodeKernel {

    /** Every layer's K and V of one token as this kernel lays them out in a page slot. */
    long bytesPerToken();

    /** Positions {@code call} appends to its request's sequence (a prompt's length, 1 per decode step). */
    default int tokensToAppend(NodeCall call) {
        return 1;
    }

    /**
     * Positions one more iteration of this node's loop appends, known before that iteration's inputs exist (a decode
     * step: 1): what the engine reserves for a speculated step. A speculated call whose inputs then ask for another
     * count is not run speculatively.
     */
    default int tokensPerContinuation() {
        return 1;
    }

    /**
     * Whether {@link #forward} feeds each call's tokens through {@link KvStep#feed}, honouring a recompute step's
     * earlier tokens: then the engine may drop a waiting request's pages under page pressure and recompute its KV
     * later, rather than fail it (docs/streaming-and-kv.md#preemption-by-recompute).
     */
    default boolean recordsFeeds() {
        return false;
    }

    /** One result per call, in order; {@code steps.get(i)} belongs to {@code batch.get(i)}. */
    List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> steps);

    /** The engine always calls the three-argument form: a KV node cannot run without its cache. */
    @Override
    default List<NodeResult> forward(Device device, List<NodeCall> batch) {
        throw new KernelException(KernelException.Reason.NO_KERNEL,
                "a KvCacheKernel runs only through the engine's KV cache");
    }
}
