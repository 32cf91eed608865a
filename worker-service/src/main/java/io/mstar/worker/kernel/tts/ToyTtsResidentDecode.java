package io.mstar.worker.kernel.tts;

import java.util.ArrayList;
import java.util.List;

import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kv.KvCacheLayout;
import io.mstar.worker.kv.KvResidentTable;
import io.mstar.worker.kv.SamplerResidentTable;
import io.mstar.worker.resident.ResidentPlan;
import io.mstar.worker.resident.ResidentPlanner;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.resident.ResidentSlots;
import io.mstar.worker.resident.ResidentStats;
import io.mstar.worker.resident.ResidentSteps;

/**
 * toy-tts's decode steps on resident tables (docs/resident-planning.md): the node's planner with its three resources
 * (the KV cache, the sampler, the lm itself) and its captured steps. Made at the first decode batch, when the KV pool
 * exists; owned by the thread that runs the node's steps; closed with the kernel, before the device.
 */
final class ToyTtsResidentDecode implements AutoCloseable {

    static final String KV = "kv";
    static final String SAMPLER = "sampler";
    static final String LM = "lm";

    private final ResidentPlanner planner;
    private final KvResidentTable kv;
    private final ResidentSteps steps;
    private final ResidentStats stats;

    private ToyTtsResidentDecode(ResidentPlanner planner, KvResidentTable kv, ResidentSteps steps,
            ResidentStats stats) {
        this.planner = planner;
        this.kv = kv;
        this.steps = steps;
        this.stats = stats;
    }

    /** Binds the node's resources and allocates their tables for the KV pool {@code first} runs on. */
    static ToyTtsResidentDecode open(Device device, LmBackend backend, KvStep first, ResidentSettings settings,
            ResidentStats stats) {
        KvCacheLayout layout = first.layout();
        int width = Math.min(layout.maxNumPages(), layout.pagesFor(CudaLmBackend.MAX_POSITIONS));
        ResidentPlanner planner = new ResidentPlanner(device, ResidentSlots.capacityFor(layout.maxNumPages()),
                settings.largestCapture());
        try {
            KvResidentTable kv = new KvResidentTable(layout, width);
            SamplerResidentTable sampler = new SamplerResidentTable();
            ToyTtsResidentLm lm = new ToyTtsResidentLm(backend, first.pool(), kv, sampler);
            planner.bind(KV, kv);
            planner.bind(SAMPLER, sampler);
            planner.bind(LM, lm);
            planner.open();
            ResidentSteps steps = new ResidentSteps(planner, lm, settings.captureSizes(), stats);
            stats.heldBytes(() -> planner.tableBytes() + steps.heldBytes());
            return new ToyTtsResidentDecode(planner, kv, steps, stats);
        } catch (RuntimeException e) {
            planner.close();
            throw e;
        }
    }

    /** Why a batch of these reservations runs eagerly, or null when it runs on the tables. */
    ResidentStats.Refusal refusal(List<KvStep> batch) {
        if (steps.padded(batch.size()) < 0) {
            return ResidentStats.Refusal.BATCH_TOO_LARGE;
        }
        for (KvStep step : batch) {
            if (step.count() != 1) {
                return ResidentStats.Refusal.NOT_A_DECODE_STEP;
            }
            if (step.resident() == null) {
                return ResidentStats.Refusal.NO_SLOT;
            }
            if (!kv.fits(step) || step.sequenceLength() > CudaLmBackend.MAX_POSITIONS) {
                return ResidentStats.Refusal.SEQUENCE_TOO_LONG;
            }
        }
        return null;
    }

    /** Runs one decode step of {@code batch} (states: each call's {@code [token, generated]}); the sampled tokens. */
    int[] run(List<KvStep> batch, List<int[]> states) {
        List<ResidentPlan.Row> rows = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            KvStep step = batch.get(i);
            rows.add(new ResidentPlan.Row(step.requestId(), step.resident().slot(), step.resident().number(), step,
                    states.get(i)));
        }
        long start = System.nanoTime();
        ResidentPlan plan = planner.plan(ToyTtsModel.DECODE, rows, steps.padded(batch.size()));
        stats.time(ResidentStats.Phase.PLAN, System.nanoTime() - start);
        return steps.run(plan);
    }

    ResidentPlanner planner() {
        return planner;
    }

    ResidentSteps steps() {
        return steps;
    }

    ResidentStats stats() {
        return stats;
    }

    @Override
    public void close() {
        try {
            steps.close();
        } finally {
            planner.close();
        }
    }
}
