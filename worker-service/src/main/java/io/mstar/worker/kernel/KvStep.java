package io.mstar.worker.kernel;

import java.util.ArrayList;
import java.util.List;

import io.mstar.request.SamplingConfig;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.KvSlot;
import io.mstar.worker.kv.TokenSampler;

/**
 * One call's view of its node's KV cache: the positions the engine reserved for it
 * ({@code [firstPosition, firstPosition + count)}), where they live, and the request's sampling. Valid during the
 * {@link KvCacheKernel#forward} call only; the kernel neither releases pages nor keeps the cache.
 *
 * @param requestId     the request
 * @param cache         the node's cache: {@link KvCache#pool()} is the device buffer, {@link KvCache#slot} and
 *                      {@link KvCache#pages} locate every earlier position of the request
 * @param firstPosition the first reserved position (the sequence length before this call)
 * @param count         positions reserved for this call
 * @param sampling      the node's {@code sampling_config} main config for this request, or the default
 * @param seed          the request's {@code random_seed} for this pass
 * @param sampler       the engine's sampler (owned by the engine loop)
 */
public record KvStep(String requestId, KvCache cache, int firstPosition, int count, SamplingConfig sampling, long seed,
        TokenSampler sampler) {

    /** The reserved slots, in position order. */
    public List<KvSlot> slots() {
        List<KvSlot> slots = new ArrayList<>(count);
        for (int p = firstPosition; p < firstPosition + count; p++) {
            slots.add(cache.slot(requestId, p));
        }
        return slots;
    }

    /** Positions in the request's sequence after this call. */
    public int sequenceLength() {
        return firstPosition + count;
    }

    /** The next token from {@code logits}: seeded by the request's seed, step = the last reserved position. */
    public int sample(float[] logits) {
        return sampler.sample(logits, sampling, seed, sequenceLength() - 1L);
    }
}
