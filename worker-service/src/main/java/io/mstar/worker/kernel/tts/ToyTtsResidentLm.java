package io.mstar.worker.kernel.tts;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kernel.tts.cuda.CudaLmBackend;
import io.mstar.worker.kv.KvResidentTable;
import io.mstar.worker.kv.SamplerResidentTable;
import io.mstar.worker.resident.CapturedResidentStep;
import io.mstar.worker.resident.DeviceInts;
import io.mstar.worker.resident.ResidentForward;
import io.mstar.worker.resident.ResidentHooks;
import io.mstar.worker.resident.ResidentPlan;
import io.mstar.worker.resident.ResidentPlanner;
import io.mstar.worker.resident.ResidentTable;
import io.mstar.worker.resident.ResidentWrites;

/**
 * The toy-tts {@code lm} node on resident tables (docs/resident-planning.md#the-toy-tts-lm): its narrow cells are the
 * loop state {@code [token, generated]} and {@code ignore_eos}; its gather makes one job per row from the row's
 * token and the KV cache's sequence length and page table; its forward is the transformer on those jobs, the EOS
 * ramp and the sampler's draw; its commit stores the sampled token and counts it. On a GPU these are the
 * {@link CudaLmBackend}'s launches; on a host device the {@link LmBackend} runs on jobs read off the tables.
 */
final class ToyTtsResidentLm implements ResidentHooks, ResidentForward {

    /** What a capture's gather fills and its forward reads (static per capture). */
    private static final class Buffers {
        DeviceBuffer jobs;
        DeviceBuffer tokens;
        final List<LmJob> hostJobs = new ArrayList<>();
    }

    private final LmBackend backend;
    private final DeviceBuffer pool;
    private final KvResidentTable kv;
    private final SamplerResidentTable sampler;
    private ResidentPlanner planner;
    private String key;
    private int token;
    private int generated;
    private int ignoreEos;
    private Buffers capturing;

    ToyTtsResidentLm(LmBackend backend, DeviceBuffer pool, KvResidentTable kv, SamplerResidentTable sampler) {
        this.backend = backend;
        this.pool = pool;
        this.kv = kv;
        this.sampler = sampler;
    }

    /**
     * On a GPU only the CUDA backend's kernels can be captured (a host backend copies to and from the device at
     * every step); on a host device any of the two built-in backends runs on jobs read off the tables.
     */
    @Override
    public Optional<String> residentRefusal() {
        if (planner.cuda() != null && !(backend instanceof CudaLmBackend)) {
            return Optional.of("lm backend " + backend.getClass().getSimpleName()
                    + " copies to and from the device at each step: a captured step needs CudaLmBackend");
        }
        if (!(backend instanceof CudaLmBackend || backend instanceof HostLmBackend)) {
            return Optional.of("lm backend " + backend.getClass().getName() + " has no resident forward");
        }
        return Optional.empty();
    }

    @Override
    public void bindResident(ResidentPlanner planner, String key) {
        this.planner = planner;
        this.key = key;
        token = planner.column(key, "token");
        generated = planner.column(key, "generated");
        ignoreEos = planner.column(key, "ignore_eos");
    }

    private int[] cells(ResidentPlan.Row row) {
        return new int[] {row.state()[0], row.state()[1], row.kv().sampling().ignoreEos() ? 1 : 0};
    }

    @Override
    public void residentRow(String rid, int slot, int[] row, ResidentWrites writes) {
        int[] c = cells(planner.row(rid));
        row[token] = c[0];
        row[generated] = c[1];
        row[ignoreEos] = c[2];
    }

    @Override
    public void residentStage(ResidentPlan plan) {
        ResidentTable narrow = planner.narrow();
        int[] columns = {token, generated, ignoreEos};
        for (int i = 0; i < plan.count(); i++) {
            if (plan.fresh(i)) {
                continue;
            }
            ResidentPlan.Row row = plan.rows().get(i);
            int[] want = cells(row);
            for (int c = 0; c < columns.length; c++) {
                if (narrow.get(row.slot(), columns[c]) != want[c]) {
                    plan.writes().cell(key, row.slot(), columns[c], want[c]);
                }
            }
        }
    }

    @Override
    public void residentGather(CapturedResidentStep step) {
        Buffers b = new Buffers();
        capturing = b;
        if (backend instanceof CudaLmBackend cuda) {
            b.jobs = step.scratch((long) step.padded() * 5 * Integer.BYTES);
            b.tokens = step.scratch((long) step.padded() * Integer.BYTES);
            step.record(key, () -> cuda.launchResidentGather(step.upload(), planner.narrow(), token,
                    kv.seqLenColumn(), kv.pageTable(), b.jobs, b.tokens, step.padded()));
        } else {
            DeviceInts ints = new DeviceInts(planner.device());
            step.record(key, () -> gatherOnHost(step, ints, b));
        }
    }

    private void gatherOnHost(CapturedResidentStep step, DeviceInts ints, Buffers b) {
        b.hostJobs.clear();
        ResidentTable narrow = planner.narrow();
        ResidentTable pages = kv.pageTable();
        for (int slot : planner.rowSlots(step.upload())) {
            int[] row = ints.read(narrow.buffer(), narrow.offset(slot, 0), narrow.width());
            int position = row[kv.seqLenColumn()];
            int[] table = ints.read(pages.buffer(), pages.offset(slot, 0), kv.layout().pagesFor(position + 1L));
            b.hostJobs.add(new LmJob(new int[] {row[token]}, position, table, true));
        }
    }

    @Override
    public void residentForward(CapturedResidentStep step) {
        Buffers b = capturing;
        capturing = null;
        int vocab = ToyTtsWeights.VOCAB;
        DeviceBuffer logits = step.scratch((long) step.padded() * vocab * Float.BYTES);
        if (backend instanceof CudaLmBackend cuda) {
            step.record(key, () -> {
                cuda.launchForward(pool, kv.layout().pageSize(), b.jobs, b.tokens, kv.pageTable().buffer(), logits,
                        step.padded());
                cuda.launchResidentBias(step.upload(), planner.narrow(), generated, ignoreEos, logits);
            });
        } else {
            DeviceInts ints = new DeviceInts(planner.device());
            step.record(key, () -> forwardOnHost(step.device(), ints, b, logits, vocab));
            step.record(key, () -> biasOnHost(step, ints, logits, vocab));
        }
        sampler.recordSample(step, logits, vocab);
    }

    private void forwardOnHost(Device device, DeviceInts ints, Buffers b, DeviceBuffer logits, int vocab) {
        float[][] rows = backend.run(device, pool, kv.layout(), b.hostJobs);
        for (int j = 0; j < rows.length; j++) {
            ints.write(logits, j * vocab, bits(rows[j]));
        }
    }

    private void biasOnHost(CapturedResidentStep step, DeviceInts ints, DeviceBuffer logits, int vocab) {
        ResidentTable narrow = planner.narrow();
        int[] slots = planner.rowSlots(step.upload());
        for (int j = 0; j < slots.length; j++) {
            int[] row = ints.read(narrow.buffer(), narrow.offset(slots[j], 0), narrow.width());
            int at = j * vocab + ToyTtsModel.EOS;
            float eos = Float.intBitsToFloat(ints.read(logits, at, 1)[0]);
            eos = row[ignoreEos] != 0 ? Float.NEGATIVE_INFINITY : eos + ToyTtsLmKernel.eosBias(row[generated]);
            ints.write(logits, at, new int[] {Float.floatToRawIntBits(eos)});
        }
    }

    private static int[] bits(float[] values) {
        int[] out = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Float.floatToRawIntBits(values[i]);
        }
        return out;
    }

    @Override
    public void residentCommit(CapturedResidentStep step) {
        step.record(key, () -> {
            planner.kernels().store(step.upload(), planner.narrow(), token, step.sampled());
            planner.kernels().add(step.upload(), planner.narrow(), generated, 1);
        });
    }

    @Override
    public void residentAdvance(ResidentPlan plan) {
        ResidentTable narrow = planner.narrow();
        for (int j = 0; j < plan.count(); j++) {
            int slot = plan.rows().get(j).slot();
            narrow.set(slot, token, plan.sampled(j));
            narrow.set(slot, generated, narrow.get(slot, generated) + 1);
        }
    }
}
