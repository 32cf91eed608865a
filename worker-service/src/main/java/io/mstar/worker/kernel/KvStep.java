package io.mstar.worker.kernel;

import java.util.ArrayList;
import java.util.Arrays;
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
 * @param refeed        on a recompute step (its request's pages were dropped under page pressure,
 *                      docs/streaming-and-kv.md#preemption-by-recompute): the token ids fed earlier at positions
 *                      {@code [0, firstPosition)}, to feed again before the call's own; null otherwise
 * @param fed           where the kernel records the {@code count} token ids the call feeds ({@link #feed}); the engine
 *                      keeps them once the step completed, so that the request's KV can be recomputed
 */
public record KvStep(String requestId, DeviceBuffer pool, KvCacheLayout layout, int[] pages, int firstPosition,
        int count, SamplingConfig sampling, long seed, TokenSampler sampler, ResidentSlots.Lease resident,
        int[] refeed, int[] fed) {

    public KvStep {
        if (fed == null || fed.length != count) {
            throw new IllegalArgumentException("fed must hold the step's " + count + " token id(s)");
        }
        if (refeed != null && refeed.length != firstPosition) {
            throw new IllegalArgumentException("a recompute step refeeds positions [0, " + firstPosition + "), got "
                    + refeed.length + " token id(s)");
        }
    }

    /** A step on pages the request holds: nothing to recompute. */
    public KvStep(String requestId, DeviceBuffer pool, KvCacheLayout layout, int[] pages, int firstPosition, int count,
            SamplingConfig sampling, long seed, TokenSampler sampler, ResidentSlots.Lease resident) {
        this(requestId, pool, layout, pages, firstPosition, count, sampling, seed, sampler, resident, null,
                new int[count]);
    }

    /**
     * Records the call's own token ids ({@code count} of them) and answers what the kernel runs: those alone, or on a
     * recompute step the earlier ones first. The tokens run start at {@link #runFrom()}.
     */
    public int[] feed(int[] own) {
        if (own.length != count) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "fed " + own.length + " tokens for " + count
                    + " reserved positions");
        }
        System.arraycopy(own, 0, fed, 0, count);
        if (refeed == null) {
            return own;
        }
        int[] all = Arrays.copyOf(refeed, firstPosition + count);
        System.arraycopy(own, 0, all, firstPosition, count);
        return all;
    }

    /** The position of the first token {@link #feed} answers: 0 on a recompute step. */
    public int runFrom() {
        return refeed == null ? firstPosition : 0;
    }

    /** Whether this step recomputes its request's dropped KV before the call's own positions. */
    public boolean recomputes() {
        return refeed != null;
    }

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
