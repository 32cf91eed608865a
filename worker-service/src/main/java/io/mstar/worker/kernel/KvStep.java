package io.mstar.worker.kernel;

import java.util.ArrayList;
import java.util.List;

import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kv.KvCacheException;
import io.mstar.worker.kv.KvCacheLayout;
import io.mstar.worker.kv.KvSlot;
import io.mstar.worker.kv.TokenSampler;
import io.mstar.worker.resident.ResidentSlots;

/**
 * One call's view of its node's KV cache: the positions the engine reserved for it
 * ({@code [firstPosition, firstPosition + count)}), the request's page table as it stood at reservation, and the
 * request's sampling. A step runs off the engine loop (docs/worker-runtime.md#the-step-pipeline), so it carries a copy
 * of what it needs rather than the loop-owned cache; valid during the {@link KvCacheKernel#forward} call only, and the
 * kernel neither releases pages nor keeps them.
 *
 * @param requestId     the request
 * @param pool          the node's pool buffer; slot offsets are relative to its start
 * @param layout        the pool's geometry
 * @param pages         the request's pages in position order, covering every position up to {@link #sequenceLength}
 * @param firstPosition the first reserved position (the sequence length before this call)
 * @param count         positions reserved for this call
 * @param sampling      the node's {@code sampling_config} main config for this request, or the default
 * @param seed          the request's {@code random_seed} for this pass
 * @param sampler       the engine's sampler (used by one step at a time)
 * @param resident      the request's slot in the node's resident tables (docs/resident-planning.md), null when every
 *                      slot is leased
 */
public record KvStep(String requestId, DeviceBuffer pool, KvCacheLayout layout, int[] pages, int firstPosition,
        int count, SamplingConfig sampling, long seed, TokenSampler sampler, ResidentSlots.Lease resident) {

    /** Where position {@code position} (any reserved one, earlier calls' included) lives. */
    public KvSlot slot(int position) {
        if (position < 0 || position >= sequenceLength()) {
            throw new KvCacheException(KvCacheException.Reason.POSITION_OUT_OF_RANGE, requestId, "position "
                    + position + " outside the " + sequenceLength() + " reserved token(s)");
        }
        int page = pages[position / layout.pageSize()];
        int slotInPage = position % layout.pageSize();
        return new KvSlot(position, page, slotInPage, layout.byteOffset(page, slotInPage));
    }

    /** The reserved slots, in position order. */
    public List<KvSlot> slots() {
        List<KvSlot> slots = new ArrayList<>(count);
        for (int p = firstPosition; p < firstPosition + count; p++) {
            slots.add(slot(p));
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
