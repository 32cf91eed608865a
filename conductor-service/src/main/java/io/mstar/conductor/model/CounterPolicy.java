package io.mstar.conductor.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.mstar.graph.ModelGraph;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.CounterModel;

/**
 * The policy of {@link CounterModel} (docs/request-flow.md): {@code prefill} then {@code decode} passes carrying
 * {@code state}; a decode pass is given {@code min(4, tokens left)} iterations and the partition is done when a
 * pass persisted {@code stopped} (its loop hit {@code stop_at}) or {@code max_tokens} tokens exist. The {@code detok} partition runs
 * from its stream buffer and is done when a pass reports {@code partition_done}.
 */
public final class CounterPolicy implements ConductorPolicy {

    @Override
    public String model() {
        return CounterModel.NAME;
    }

    @Override
    public Map<String, String> inputDtypes() {
        return Map.of(CounterModel.TOKENS, CounterModel.DTYPE);
    }

    @Override
    public void validate(PolicyRequest request) {
        String stopAt = request.modelKwargs().get(CounterModel.STOP_AT);
        if (stopAt != null) {
            try {
                Integer.parseInt(stopAt.trim());
            } catch (NumberFormatException e) {
                throw new ModelInputException("model_kwargs.stop_at must be an int32, was '" + stopAt + "'");
            }
        }
        List<TensorPointerInfo> tokens = request.inputs().get(CounterModel.TOKENS);
        if (tokens == null || tokens.size() != 1 || tokens.get(0).dims().size() != 1 || tokens.get(0).dims().get(0) < 1) {
            throw new ModelInputException("counter needs one input 'tokens': a non-empty 1-D int32 tensor");
        }
    }

    @Override
    public Step initial(String partition, PolicyRequest request) {
        if (partition.equals(CounterModel.DETOK_PARTITION)) {
            return new Step(CounterModel.CHUNK, Map.of(), Map.of(), Map.of());
        }
        if (!partition.equals(ModelGraph.DEFAULT_PARTITION)) {
            throw new PolicyException("counter has no partition '" + partition + "'");
        }
        return new Step(CounterModel.PREFILL, Map.of(CounterModel.TOKENS, request.inputs().get(CounterModel.TOKENS)),
                stepMetadata(request), Map.of());
    }

    @Override
    public Transition next(PassResult result, PolicyRequest request) {
        if (result.partition().equals(CounterModel.DETOK_PARTITION)) {
            return result.partitionDone() ? Transition.done(List.of()) : Transition.awaitStream();
        }
        String walk = result.step().walk();
        List<TensorPointerInfo> state = result.persisted().get(CounterModel.STATE);
        if (state == null || state.isEmpty()) {
            throw new PolicyException("counter " + walk + " pass persisted no '" + CounterModel.STATE + "'");
        }
        List<TensorPointerInfo> consumed = result.step().inputs().getOrDefault(CounterModel.STATE, List.of());
        int left = request.maxTokens() - result.tokensProduced();
        List<TensorPointerInfo> stopped = result.persisted().getOrDefault(CounterModel.STOPPED, List.of());
        if (!stopped.isEmpty() || left <= 0) {
            List<TensorPointerInfo> unpersist = new ArrayList<>(consumed);
            unpersist.addAll(state);
            unpersist.addAll(stopped);
            return Transition.done(unpersist);
        }
        Step decode = new Step(CounterModel.DECODE, Map.of(CounterModel.STATE, state), stepMetadata(request),
                Map.of(CounterModel.DECODE_LOOP, Math.min(CounterModel.DECODE_MAX_ITERS, left)));
        return Transition.next(decode, consumed);
    }

    private static Map<String, String> stepMetadata(PolicyRequest request) {
        String stopAt = request.modelKwargs().get(CounterModel.STOP_AT);
        return stopAt == null ? Map.of() : Map.of(CounterModel.STOP_AT, stopAt.trim());
    }
}
