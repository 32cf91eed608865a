package io.mstar.worker.kernel.tts;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.Int32Writes;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kv.KvCacheException;
import io.mstar.worker.kv.StopCriteria;
import io.mstar.worker.kv.StopReason;
import io.mstar.worker.kv.TokenSampler;
import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;
import io.mstar.worker.resident.ResidentStats;
import io.mstar.worker.tp.TensorParallelSampling;

/**
 * The toy-tts {@code lm} node in both of its walks ({@link ToyTtsModel}): in {@code prefill} it feeds
 * {@code [BOS, prompt bytes but the last]} into the KV cache and carries the last byte as {@code state}; in
 * {@code decode} it feeds {@code state[0]}, samples the next token with the request's sampling config and pass seed
 * ({@link KvStep#sample}), and emits it, or on EOS persists {@code stopped} and finishes the loop (the
 * {@link StopCriteria} of the model's EOS). The transformer itself is the {@link LmBackend}'s (host or CUDA); the
 * backend is made on first use, so a worker that never runs {@code lm} never builds the weights.
 *
 * <p>Logits from the backend get, before sampling: the EOS ramp {@code EOS_RAMP * (generated - EOS_ONSET)} (EOS
 * grows likelier with every token; with {@code ignore_eos} EOS is masked instead, so a benchmark runs to
 * {@code max_tokens}). A bad input or unusable logits fail that request only.
 */
public final class ToyTtsLmKernel implements KvCacheKernel, AutoCloseable {

    /** EOS logit added per token generated so far, from {@link #EOS_ONSET} tokens on (negative before). */
    public static final float EOS_RAMP = 0.4f;
    public static final int EOS_ONSET = 24;

    private static final Logger log = LoggerFactory.getLogger(ToyTtsLmKernel.class);

    private final Supplier<LmBackend> backendFactory;
    private final ResidentSettings residentSettings;
    private final MeterRegistry registry;
    /** The tensor-parallel group this rank samples with (rank 0 draws, the others take its tokens); null alone. */
    private final Collective group;
    private LmBackend backend;
    private ToyTtsResidentDecode resident;
    private ResidentStats residentStats;
    /** Why a resource refused the tables at the first decode step; decode steps run eagerly from then on. */
    private String refusedBecause;

    /** Decode steps run eagerly (no resident planning). */
    public ToyTtsLmKernel(Supplier<LmBackend> backendFactory) {
        this(backendFactory, ResidentSettings.of(ResidentMode.OFF), null);
    }

    /**
     * @param resident whether and how decode steps run on resident tables (docs/resident-planning.md)
     * @param registry where the resident meters go; null keeps them to the kernel
     */
    public ToyTtsLmKernel(Supplier<LmBackend> backendFactory, ResidentSettings resident, MeterRegistry registry) {
        this.backendFactory = backendFactory;
        this.residentSettings = resident;
        this.registry = registry;
        this.group = null;
    }

    /**
     * One rank of a tensor-parallel group (docs/toy-tts.md#tensor-parallelism): the backend is this rank's
     * {@link TensorParallelLmBackend} over {@code group}, decode tokens are rank 0's draws
     * ({@link TensorParallelSampling}), steps run eagerly.
     */
    public ToyTtsLmKernel(Supplier<LmBackend> backendFactory, Collective group) {
        this.backendFactory = backendFactory;
        this.residentSettings = ResidentSettings.of(ResidentMode.OFF);
        this.registry = null;
        this.group = group;
    }

    /**
     * Frees what the backend holds on the device (the CUDA backend's weights) before the device closes: the worker's
     * {@code KernelCatalog} closes its kernels first, so the weights are not reported as leaked at shutdown.
     */
    @Override
    public void close() throws Exception {
        if (resident != null) {
            ToyTtsResidentDecode r = resident;
            resident = null;
            r.close();
        }
        if (backend instanceof AutoCloseable closeable) {
            backend = null;
            closeable.close();
        }
        if (group != null) {
            group.close(); // this rank's; the kernel is its only user
        }
    }

    @Override
    public long bytesPerToken() {
        return group == null ? ToyTtsWeights.BYTES_PER_TOKEN : ToyTtsWeights.bytesPerToken(group.size());
    }

    /** Every call's tokens go through {@link KvStep#feed}: a dropped request's KV is recomputed from them. */
    @Override
    public boolean recordsFeeds() {
        return true;
    }

    @Override
    public int tokensToAppend(NodeCall call) {
        if (isPrefill(call)) {
            // [BOS, b0 .. b(n-2)]: the last byte is fed by the first decode step
            return (int) call.input(ToyTtsModel.TEXT_INPUT).elementCount();
        }
        return 1;
    }

    private static boolean isPrefill(NodeCall call) {
        return call.inputs().containsKey(ToyTtsModel.TEXT_INPUT);
    }

    /** The EOS ramp for the token sampled after {@code generated} tokens. */
    public static float eosBias(int generated) {
        return EOS_RAMP * (generated - EOS_ONSET);
    }

    @Override
    public List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> steps) {
        NodeResult[] results = new NodeResult[batch.size()];
        List<Integer> admitted = new ArrayList<>();
        List<LmJob> jobs = new ArrayList<>();
        List<int[]> states = new ArrayList<>();
        Map<Integer, int[]> decodeStates = readStates(device, batch);
        for (int i = 0; i < batch.size(); i++) {
            NodeCall call = batch.get(i);
            KvStep step = steps.get(i);
            try {
                int[] feed;
                int[] state;
                if (isPrefill(call)) {
                    int[] prompt = bytes(device, call.input(ToyTtsModel.TEXT_INPUT));
                    feed = new int[prompt.length];
                    if (prompt.length > 0) {
                        feed[0] = ToyTtsModel.BOS;
                        System.arraycopy(prompt, 0, feed, 1, prompt.length - 1);
                    }
                    state = new int[] {prompt.length == 0 ? ToyTtsModel.BOS : prompt[prompt.length - 1], 0};
                } else {
                    state = decodeStates.containsKey(i) ? decodeStates.get(i)
                            : Int32Tensors.read(device, call.input(ToyTtsModel.STATE));
                    if (state.length != 2 || state[0] < 0 || state[0] >= ToyTtsModel.EOS || state[1] < 0) {
                        throw new KernelException(KernelException.Reason.BAD_INPUT,
                                "state must be [token, generated] with a byte or BOS token");
                    }
                    feed = new int[] {state[0]};
                    TokenSampler.checkSettings(step.sampling(), ToyTtsWeights.VOCAB);
                }
                jobs.add(new LmJob(step.feed(feed), step.runFrom(), step.pages(), !isPrefill(call)));
                states.add(state);
                admitted.add(i);
            } catch (KernelException | KvCacheException e) {
                results[i] = NodeResult.failed(e);
            }
        }
        if (backend == null && !jobs.isEmpty()) {
            backend = backendFactory.get();
        }
        if (!jobs.isEmpty() && jobs.stream().allMatch(LmJob::wantLogits) && residentOn(device)
                && admitted.stream().noneMatch(i -> steps.get(i).recomputes())) {
            List<KvStep> reserved = admitted.stream().map(steps::get).toList();
            ToyTtsResidentDecode r = resident(device, reserved.get(0));
            ResidentStats.Refusal why = r == null ? ResidentStats.Refusal.RESOURCE : r.refusal(reserved);
            if (why == null) {
                return decodeResident(device, batch, r, reserved, admitted, states, results);
            }
            residentStats.refused(why);
        }
        float[][] logits = jobs.isEmpty() ? new float[0][]
                : backend.run(device, steps.get(0).pool(), steps.get(0).layout(), jobs);
        int[] tokens = group == null ? null : groupTokens(device, batch, steps, admitted, states, logits);
        Int32Writes made = new Int32Writes(device);
        try {
            for (int j = 0; j < admitted.size(); j++) {
                int i = admitted.get(j);
                NodeCall call = batch.get(i);
                int[] state = states.get(j);
                if (isPrefill(call)) {
                    results[i] = NodeResult.of(outputs(Map.of(ToyTtsModel.STATE, state), made));
                    continue;
                }
                try {
                    if (tokens != null) {
                        if (tokens[j] == TensorParallelSampling.FAILED) {
                            throw new KvCacheException(KvCacheException.Reason.INVALID_LOGITS, call.requestId(),
                                    "rank 0 could not draw a token (unusable logits or sampling settings)");
                        }
                        results[i] = decoded(call, steps.get(i), state, tokens[j], made);
                        continue;
                    }
                    results[i] = decode(call, steps.get(i), state, logits[j], made);
                } catch (KvCacheException | KernelException e) {
                    results[i] = NodeResult.failed(e);
                }
            }
            made.flush();
        } catch (RuntimeException | Error e) {
            made.freeAll(e);
            throw e;
        }
        return List.of(results);
    }

    /**
     * Rank 0's draws for the batch, the same on every rank: a row per admitted call (a prefill's row, which has no
     * logits, is never drawn), so every rank broadcasts the same number of ids.
     */
    private int[] groupTokens(Device device, List<NodeCall> batch, List<KvStep> steps, List<Integer> admitted,
            List<int[]> states, float[][] logits) {
        return new TensorParallelSampling(group, device).sample(logits, (j, row) -> {
            int i = admitted.get(j);
            return isPrefill(batch.get(i)) ? 0 : draw(steps.get(i), states.get(j)[1], row);
        });
    }

    private boolean residentOn(Device device) {
        return residentSettings.mode().enabled(device.kind());
    }

    private ToyTtsResidentDecode resident(Device device, KvStep first) {
        if (residentStats == null) {
            residentStats = new ResidentStats(registry, ToyTtsModel.NAME, ToyTtsModel.LM);
        }
        if (resident == null && refusedBecause == null) {
            ToyTtsResidentDecode opened = ToyTtsResidentDecode.open(device, backend, first, residentSettings,
                    residentStats);
            Optional<String> why = opened.planner().refusal();
            if (why.isPresent()) {
                opened.close();
                refusedBecause = why.get();
                log.info("toy-tts lm: decode steps run eagerly on {}: {}", device.name(), refusedBecause);
                return null;
            }
            resident = opened;
            log.info("toy-tts lm: decode steps on resident tables on {} (capture sizes {})", device.name(),
                    residentSettings.captureSizes());
        }
        return resident;
    }

    /** The lm plans on tables: its backend's own refusal, if any, shows at the first decode step. */
    @Override
    public Optional<String> residentRefusal() {
        return Optional.ofNullable(refusedBecause);
    }

    /** The decode batch on the node's resident tables: only the sampled tokens come back. */
    private List<NodeResult> decodeResident(Device device, List<NodeCall> batch, ToyTtsResidentDecode r,
            List<KvStep> reserved, List<Integer> admitted, List<int[]> states, NodeResult[] results) {
        int[] tokens = r.run(reserved, states);
        Int32Writes made = new Int32Writes(device);
        try {
            for (int j = 0; j < admitted.size(); j++) {
                int i = admitted.get(j);
                try {
                    if (tokens[j] < 0) {
                        throw new KvCacheException(KvCacheException.Reason.INVALID_LOGITS, batch.get(i).requestId(),
                                "the step's logits were unusable (a NaN or +infinity, or no finite candidate)");
                    }
                    results[i] = decoded(batch.get(i), reserved.get(j), states.get(j), tokens[j], made);
                } catch (KvCacheException | KernelException e) {
                    results[i] = NodeResult.failed(e);
                }
            }
            made.flush();
        } catch (RuntimeException | Error e) {
            made.freeAll(e);
            throw e;
        }
        return List.of(results);
    }

    /** The resident decoder, once made (tests). */
    ToyTtsResidentDecode residentDecode() {
        return resident;
    }

    private NodeResult decode(NodeCall call, KvStep step, int[] state, float[] logits, Int32Writes made) {
        return decoded(call, step, state, draw(step, state[1], logits), made);
    }

    /**
     * The token the lm samples from a decode step's {@code logits} after {@code generated} tokens: the EOS ramp (or
     * EOS masked with {@code ignore_eos}), then the step's sampler with the request's settings, seed and position.
     * What rank 0 of a tensor-parallel group draws ({@code TensorParallelSampling}). {@code logits} is not modified.
     *
     * @throws KvCacheException for unusable logits or sampling settings
     */
    public static int draw(KvStep step, int generated, float[] logits) {
        float[] row = logits.clone();
        if (step.sampling().ignoreEos()) {
            row[ToyTtsModel.EOS] = Float.NEGATIVE_INFINITY;
        } else {
            row[ToyTtsModel.EOS] += eosBias(generated);
        }
        return step.sample(row);
    }

    /** The outputs after sampling {@code token}: the next state and the token, or the stop. */
    private NodeResult decoded(NodeCall call, KvStep step, int[] state, int token, Int32Writes made) {
        SamplingConfig sampling = step.sampling();
        int generated = state[1];
        StopReason reason = StopCriteria.of(Set.of(ToyTtsModel.EOS), call.info().maxTokens(), sampling)
                .check(token, generated + 1);
        Map<String, int[]> values = new LinkedHashMap<>();
        if (reason == StopReason.EOS) {
            values.put(ToyTtsModel.STATE, new int[] {token, generated});
            values.put(ToyTtsModel.STOPPED, new int[] {token});
            return NodeResult.of(outputs(values, made), true);
        }
        values.put(ToyTtsModel.STATE, new int[] {token, generated + 1});
        values.put(ToyTtsModel.TEXT, new int[] {token});
        values.put(ToyTtsModel.NEW_TOKEN, new int[] {generated, token});
        // max_tokens: the conductor gives no more iterations anyway; finishing says so to the loop as well
        return NodeResult.of(outputs(values, made), reason == StopReason.MAX_TOKENS);
    }

    private static Map<String, Tensor> outputs(Map<String, int[]> values, Int32Writes made) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        values.forEach((name, v) -> out.put(name, made.add(v)));
        return out;
    }

    /**
     * The {@code state} of every decode call whose input is {@code int32}, read in one batch; a call with another
     * dtype is left out, so that its own read fails it alone.
     */
    private static Map<Integer, int[]> readStates(Device device, List<NodeCall> batch) {
        List<Integer> at = new ArrayList<>();
        List<Tensor> tensors = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            NodeCall call = batch.get(i);
            Tensor state = isPrefill(call) ? null : call.inputs().get(ToyTtsModel.STATE);
            if (state != null && Int32Tensors.DTYPE.equals(state.dtype())) {
                at.add(i);
                tensors.add(state);
            }
        }
        Map<Integer, int[]> out = new HashMap<>();
        if (tensors.isEmpty()) {
            return out;
        }
        List<int[]> values = Int32Tensors.readAll(device, tensors);
        for (int k = 0; k < at.size(); k++) {
            out.put(at.get(k), values.get(k));
        }
        return out;
    }

    /** The prompt's bytes (uint8) as ids 0..255. */
    static int[] bytes(Device device, Tensor tensor) {
        if (!ToyTtsModel.INPUT_DTYPE.equals(tensor.dtype())) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "text: expected uint8, got " + tensor.dtype());
        }
        int n = Math.toIntExact(tensor.elementCount());
        if (n > ToyTtsModel.MAX_PROMPT_BYTES) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "prompt of " + n + " bytes is over "
                    + ToyTtsModel.MAX_PROMPT_BYTES);
        }
        ByteBuffer buffer = ByteBuffer.allocateDirect(n);
        if (n > 0) {
            device.copyToHost(tensor.buffer(), 0, buffer);
        }
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = buffer.get(i) & 0xFF;
        }
        return out;
    }
}
