package io.mstar.worker.kv;

import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.resident.CapturedResidentStep;
import io.mstar.worker.resident.DeviceInts;
import io.mstar.worker.resident.ResidentHooks;
import io.mstar.worker.resident.ResidentPlan;
import io.mstar.worker.resident.ResidentPlanner;
import io.mstar.worker.resident.ResidentTable;
import io.mstar.worker.resident.ResidentWrites;

/**
 * The sampler's share of a node's resident tables (docs/resident-planning.md#the-sampler): per request, narrow, its
 * temperature and top-p (as the two halves of their doubles), top-k, vocabulary size, seed (two halves) and step, so
 * the captured step draws on the device with the {@link TokenSampler}'s function of {@code (seed, step)}. Its commit
 * advances the step; settings changed mid-request are staged cell by cell.
 */
public final class SamplerResidentTable implements ResidentHooks {

    /** Its narrow columns, in the order the device draw reads them ({@code resident_kernels.cu}). */
    static final String[] COLUMNS = {"temperature_hi", "temperature_lo", "top_k", "top_p_hi", "top_p_lo",
            "vocab_size", "seed_hi", "seed_lo", "step"};
    static final int STEP = 8;

    private final TokenSampler sampler = new TokenSampler();
    private ResidentPlanner planner;
    private String key;
    private int first;

    @Override
    public void bindResident(ResidentPlanner planner, String key) {
        this.planner = planner;
        this.key = key;
        first = planner.column(key, COLUMNS[0]);
        for (int i = 1; i < COLUMNS.length; i++) {
            if (planner.column(key, COLUMNS[i]) != first + i) {
                throw new IllegalStateException("the sampler's columns must be adjacent");
            }
        }
    }

    /** The cells of a call's sampling: what its row must hold when its step starts. */
    static int[] cells(KvStep kv) {
        SamplingConfig s = kv.sampling();
        long t = Double.doubleToRawLongBits(s.temperature());
        long p = Double.doubleToRawLongBits(s.topP());
        long step = kv.sequenceLength() - 1L;
        return new int[] {(int) (t >>> 32), (int) t, s.topK(), (int) (p >>> 32), (int) p,
                s.vocabSize() == null ? 0 : s.vocabSize(), (int) (kv.seed() >>> 32), (int) kv.seed(),
                Math.toIntExact(step)};
    }

    @Override
    public void residentRow(String rid, int slot, int[] row, ResidentWrites writes) {
        int[] cells = cells(planner.row(rid).kv());
        System.arraycopy(cells, 0, row, first, cells.length);
    }

    @Override
    public void residentStage(ResidentPlan plan) {
        ResidentTable narrow = planner.narrow();
        for (int i = 0; i < plan.count(); i++) {
            if (plan.fresh(i)) {
                continue;
            }
            ResidentPlan.Row row = plan.rows().get(i);
            int[] want = cells(row.kv());
            for (int c = 0; c < want.length; c++) {
                if (narrow.get(row.slot(), first + c) != want[c]) {
                    plan.writes().cell(key, row.slot(), first + c, want[c]);
                }
            }
        }
    }

    @Override
    public void residentCommit(CapturedResidentStep step) {
        step.record(key, () -> planner.kernels().add(step.upload(), planner.narrow(), first + STEP, 1));
    }

    @Override
    public void residentAdvance(ResidentPlan plan) {
        ResidentTable narrow = planner.narrow();
        for (ResidentPlan.Row row : plan.rows()) {
            narrow.set(row.slot(), first + STEP, narrow.get(row.slot(), first + STEP) + 1);
        }
    }

    /**
     * Records the draw of each real row's token from {@code logits} ({@code padded x vocab} floats) into
     * {@link CapturedResidentStep#sampled()}: the node's forward calls this after its logits.
     */
    public void recordSample(CapturedResidentStep step, DeviceBuffer logits, int vocab) {
        if (planner.cuda() != null) {
            step.record(key, () -> planner.cuda().sample(step.upload(), planner.narrow(), first, logits, vocab,
                    step.padded(), step.sampled()));
        } else {
            DeviceInts ints = new DeviceInts(planner.device());
            step.record(key, () -> drawOnHost(step, ints, logits, vocab));
        }
    }

    private void drawOnHost(CapturedResidentStep step, DeviceInts ints, DeviceBuffer logits, int vocab) {
        int[] slots = planner.rowSlots(step.upload());
        ResidentTable narrow = planner.narrow();
        int[] tokens = new int[slots.length];
        for (int j = 0; j < slots.length; j++) {
            int[] c = ints.read(narrow.buffer(), narrow.offset(slots[j], first), COLUMNS.length);
            // only what the draw reads; ignore_eos and the penalty are the node's (applied to the logits before)
            SamplingConfig config = new SamplingConfig(c[5] == 0 ? null : c[5], joined(c[0], c[1]), c[2],
                    joined(c[3], c[4]), false, 1.0, 0L);
            long seed = ((long) c[6] << 32) | (c[7] & 0xFFFFFFFFL);
            float[] row = floats(ints, logits, j * vocab, vocab);
            try {
                tokens[j] = sampler.sample(row, config, seed, c[STEP]);
            } catch (KvCacheException e) {
                tokens[j] = -1;
            }
        }
        ints.write(step.sampled(), 0, tokens);
    }

    private static double joined(int hi, int lo) {
        return Double.longBitsToDouble(((long) hi << 32) | (lo & 0xFFFFFFFFL));
    }

    private static float[] floats(DeviceInts ints, DeviceBuffer buffer, int at, int count) {
        int[] bits = ints.read(buffer, at, count);
        float[] out = new float[count];
        for (int i = 0; i < count; i++) {
            out[i] = Float.intBitsToFloat(bits[i]);
        }
        return out;
    }
}
