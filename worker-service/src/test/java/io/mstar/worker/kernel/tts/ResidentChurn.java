package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.KvCacheLayout;
import io.mstar.worker.kv.TokenSampler;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.resident.ResidentStats;
import io.mstar.worker.resident.ResidentTable;

/**
 * Resident planning under churn (docs/resident-planning.md#how-it-is-tested): the same requests run through an eager
 * lm and a resident one on one device, each over its own KV cache driven identically. Requests are admitted and
 * removed at random, offloaded and reloaded, cross page boundaries every few tokens, change their sampling mid-request,
 * and are batched 1 to 10 at a time (padded to 1, 2, 4 or 8; 9 and 10 run eagerly, so rows go stale). After every
 * step the host mirror must equal the device tables cell by cell, and every token the resident path samples must be
 * the eager path's, bit for bit. Leaves the device at the bytes it found.
 */
final class ResidentChurn {

    static final int PAGE = 4;
    static final int DEVICE_PAGES = 40;
    static final int HOST_PAGES = 400;

    /** One request as both paths see it. */
    private static final class Req {
        final String id;
        final long seed;
        final int maxTokens;
        SamplingConfig sampling;
        Tensor stateEager;
        Tensor stateResident;

        Req(String id, long seed, int maxTokens, SamplingConfig sampling) {
            this.id = id;
            this.seed = seed;
            this.maxTokens = maxTokens;
            this.sampling = sampling;
        }
    }

    private final Map<String, Integer> counts = new LinkedHashMap<>();
    private final Device device;
    private final Supplier<LmBackend> eagerBackend;
    private final Supplier<LmBackend> residentBackend;

    /** What a run did, for the caller's assertions. */
    record Summary(Map<String, Integer> counts, long replays, long captures, long batchTooLarge, long newRows,
            long staleRows, String refusal, Map<ResidentStats.Phase, Long> timedPhases) {
    }

    ResidentChurn(Device device, Supplier<LmBackend> eagerBackend, Supplier<LmBackend> residentBackend) {
        this.device = device;
        this.eagerBackend = eagerBackend;
        this.residentBackend = residentBackend;
    }

    Summary run(long seed, int steps) throws Exception {
        Random random = new Random(seed);
        {
            long baseline = device.stats().bytesInUse();
            KvCacheLayout layout = new KvCacheLayout(PAGE, DEVICE_PAGES, ToyTtsWeights.BYTES_PER_TOKEN);
            KvCache eagerCache = new KvCache(device, layout, HOST_PAGES);
            KvCache residentCache = new KvCache(device, layout, HOST_PAGES);
            ToyTtsLmKernel eager = new ToyTtsLmKernel(eagerBackend);
            ToyTtsLmKernel resident = new ToyTtsLmKernel(residentBackend,
                    new ResidentSettings(ResidentMode.ON, List.of(1, 2, 4, 8)), null);
            TokenSampler sampler = new TokenSampler();
            List<Req> live = new ArrayList<>();
            int next = 0;
            for (int step = 0; step < steps; step++) {
                if (live.size() < 14 && (live.isEmpty() || random.nextInt(4) == 0)) {
                    Req r = new Req("r" + next++, random.nextLong(), 8 + random.nextInt(40), sampling(random));
                    if (prefill(device, random, r, eagerCache, residentCache, eager, resident, sampler, live)) {
                        live.add(r);
                    }
                }
                if (!live.isEmpty() && random.nextInt(25) == 0) {
                    remove(device, live.remove(random.nextInt(live.size())), eagerCache, residentCache);
                    count("removed");
                }
                if (!live.isEmpty() && random.nextInt(12) == 0) {
                    Req r = live.get(random.nextInt(live.size()));
                    boolean moved = eagerCache.offload(r.id);
                    assertThat(residentCache.offload(r.id)).isEqualTo(moved);
                    count(moved ? "offloaded" : "offload refused");
                }
                if (!live.isEmpty() && random.nextInt(15) == 0) {
                    live.get(random.nextInt(live.size())).sampling = sampling(random);
                    count("sampling changed");
                }
                decodeStep(device, random, live, eagerCache, residentCache, eager, resident, sampler, step);
                assertMirrorEqualsTables(device, resident, step);
            }
            ToyTtsResidentDecode decode = resident.residentDecode();
            Summary summary = decode == null
                    ? new Summary(Map.copyOf(counts), 0, 0, 0, 0, 0, resident.residentRefusal().orElse(null), Map.of())
                    : new Summary(Map.copyOf(counts), decode.stats().replays(), decode.stats().captures(),
                            decode.stats().refusals(ResidentStats.Refusal.BATCH_TOO_LARGE), decode.planner().newRows(),
                            decode.planner().staleRows(), resident.residentRefusal().orElse(null),
                            java.util.Arrays.stream(ResidentStats.Phase.values()).collect(java.util.stream.Collectors
                                    .toMap(p -> p, p -> decode.stats().phase(p).count())));
            System.out.println("[resident churn] " + summary);
            for (Req r : live) {
                remove(device, r, eagerCache, residentCache);
            }
            eager.close();
            resident.close();
            eagerCache.close();
            residentCache.close();
            assertThat(device.stats().bytesInUse()).as("every tensor, table and page freed").isEqualTo(baseline);
            return summary;
        }
    }

    private static SamplingConfig sampling(Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> new SamplingConfig(null, 0.0, 0, 1.0, random.nextInt(3) == 0, 1.0, 0L);
            case 1 -> new SamplingConfig(null, 0.3 + random.nextDouble(), 0, 1.0, false, 1.0, 0L);
            case 2 -> new SamplingConfig(null, 0.5 + random.nextDouble(), 1 + random.nextInt(20), 1.0,
                    random.nextBoolean(), 1.0, 0L);
            default -> new SamplingConfig(random.nextBoolean() ? null : 200, 0.8, random.nextInt(30),
                    0.5 + random.nextDouble() / 2, false, 1.0, 0L);
        };
    }

    private boolean prefill(Device device, Random random, Req r, KvCache eagerCache, KvCache residentCache,
            ToyTtsLmKernel eager, ToyTtsLmKernel resident, TokenSampler sampler, List<Req> live) {
        byte[] prompt = new byte[1 + random.nextInt(7)];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = (byte) ('a' + random.nextInt(26));
        }
        eagerCache.addRequest(r.id);
        residentCache.addRequest(r.id);
        if (!makeRoom(eagerCache, residentCache, r.id, prompt.length, live, List.of())) {
            eagerCache.releaseRequest(r.id);
            residentCache.releaseRequest(r.id);
            return false;
        }
        ByteBuffer bytes = ByteBuffer.allocateDirect(prompt.length).put(prompt).flip();
        Tensor text = new Tensor(DeviceUploads.upload(device, bytes), ToyTtsModel.INPUT_DTYPE,
                List.of((long) prompt.length));
        NodeCall call = call(r, Map.of(ToyTtsModel.TEXT_INPUT, text));
        NodeResult a = eager.forward(device, List.of(call), List.of(reserve(eagerCache, r, prompt.length, sampler)))
                .get(0);
        NodeResult b = resident.forward(device, List.of(call),
                List.of(reserve(residentCache, r, prompt.length, sampler))).get(0);
        device.free(text.buffer());
        r.stateEager = a.outputs().get(ToyTtsModel.STATE);
        r.stateResident = b.outputs().get(ToyTtsModel.STATE);
        assertThat(Int32Tensors.read(device, r.stateResident)).isEqualTo(Int32Tensors.read(device, r.stateEager));
        return true;
    }

    private void decodeStep(Device device, Random random, List<Req> live, KvCache eagerCache,
            KvCache residentCache, ToyTtsLmKernel eager, ToyTtsLmKernel resident, TokenSampler sampler, int step) {
        List<Req> order = new ArrayList<>(live);
        Collections.shuffle(order, random);
        int size = 1 + random.nextInt(random.nextInt(8) == 0 ? 10 : 8);
        List<Req> batch = new ArrayList<>();
        List<KvStep> eagerSteps = new ArrayList<>();
        List<KvStep> residentSteps = new ArrayList<>();
        for (Req r : order) {
            if (batch.size() == size) {
                break;
            }
            if (eagerCache.isOffloaded(r.id)) {
                if (eagerCache.devicePagesNeeded(r.id, 1) > eagerCache.freePages()
                        && !makeRoom(eagerCache, residentCache, r.id, 1, live, batch)) {
                    continue;
                }
                boolean back = eagerCache.reload(r.id);
                assertThat(residentCache.reload(r.id)).isEqualTo(back);
                if (!back) {
                    continue;
                }
                count("reloaded");
            }
            if (!makeRoom(eagerCache, residentCache, r.id, 1, live, batch)) {
                continue;
            }
            if (eagerCache.tokenCount(r.id) % PAGE == 0) {
                count("new page");
            }
            batch.add(r);
            eagerSteps.add(reserve(eagerCache, r, 1, sampler));
            residentSteps.add(reserve(residentCache, r, 1, sampler));
        }
        if (batch.isEmpty()) {
            return;
        }
        List<NodeCall> eagerCalls = batch.stream().map(r -> call(r, Map.of(ToyTtsModel.STATE, r.stateEager))).toList();
        List<NodeCall> residentCalls = batch.stream()
                .map(r -> call(r, Map.of(ToyTtsModel.STATE, r.stateResident))).toList();
        List<NodeResult> a = eager.forward(device, eagerCalls, eagerSteps);
        List<NodeResult> b = resident.forward(device, residentCalls, residentSteps);
        for (int i = 0; i < batch.size(); i++) {
            Req r = batch.get(i);
            assertThat(b.get(i).failed()).as("step %d, %s failed: %s", step, r.id, b.get(i)).isEqualTo(
                    a.get(i).failed());
            assertThat(a.get(i).failed()).as("step %d %s: %s", step, r.id, a.get(i)).isFalse();
            Map<String, Tensor> ea = a.get(i).outputs();
            Map<String, Tensor> rb = b.get(i).outputs();
            assertThat(rb.keySet()).isEqualTo(ea.keySet());
            for (String name : ea.keySet()) {
                assertThat(Int32Tensors.read(device, rb.get(name))).as("step %d %s %s", step, r.id, name)
                        .isEqualTo(Int32Tensors.read(device, ea.get(name)));
            }
            device.free(r.stateEager.buffer());
            device.free(r.stateResident.buffer());
            r.stateEager = ea.get(ToyTtsModel.STATE);
            r.stateResident = rb.get(ToyTtsModel.STATE);
            for (String name : ea.keySet()) {
                if (!name.equals(ToyTtsModel.STATE)) {
                    device.free(ea.get(name).buffer());
                    device.free(rb.get(name).buffer());
                }
            }
            if (a.get(i).finish()) {
                live.remove(r);
                remove(device, r, eagerCache, residentCache);
                count("finished");
            }
        }
    }

    /** Offloads requests outside {@code batch} (the oldest first) until {@code id} can take {@code n} positions. */
    private boolean makeRoom(KvCache eagerCache, KvCache residentCache, String id, int n, List<Req> live,
            List<Req> batch) {
        for (Req victim : live) {
            if (eagerCache.devicePagesNeeded(id, n) <= eagerCache.freePages()) {
                break;
            }
            if (victim.id.equals(id) || batch.contains(victim) || eagerCache.isOffloaded(victim.id)) {
                continue;
            }
            boolean moved = eagerCache.offload(victim.id);
            assertThat(residentCache.offload(victim.id)).isEqualTo(moved);
            if (moved) {
                count("offloaded");
            }
        }
        return eagerCache.devicePagesNeeded(id, n) <= eagerCache.freePages();
    }

    private static KvStep reserve(KvCache cache, Req r, int n, TokenSampler sampler) {
        int first = cache.appendTokens(r.id, n);
        return new KvStep(r.id, cache.pool(), cache.layout(), cache.pages(r.id), first, n, r.sampling, r.seed,
                sampler, cache.residentLease(r.id));
    }

    private static NodeCall call(Req r, Map<String, Tensor> inputs) {
        return new NodeCall(r.id, inputs, new CurrentForwardPassInfo(r.id, ToyTtsModel.DECODE, false, 0, r.seed,
                r.maxTokens), new NestedLoopIndices(List.of(), Map.of(), 0));
    }

    private static void remove(Device device, Req r, KvCache eagerCache, KvCache residentCache) {
        eagerCache.releaseRequest(r.id);
        residentCache.releaseRequest(r.id);
        device.free(r.stateEager.buffer());
        device.free(r.stateResident.buffer());
    }

    private void assertMirrorEqualsTables(Device device, ToyTtsLmKernel resident, int step) {
        if (resident.residentDecode() == null) {
            return;
        }
        for (ResidentTable t : resident.residentDecode().planner().tables()) {
            assertThat(t.readDevice(device)).as("step %d: table %s/%s, device vs host mirror", step, t.key(), t.name())
                    .isEqualTo(t.mirror());
        }
    }

    private void count(String what) {
        counts.merge(what, 1, Integer::sum);
    }
}
