package io.mstar.conductor.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.ToyTtsModel;

/**
 * The policy of {@link ToyTtsModel} (docs/toy-tts.md): partition {@code lm} runs {@code prefill} with the prompt,
 * then {@code decode} passes carrying {@code state}, each given {@code min(16, tokens left)} iterations; it is done
 * when a pass persisted {@code stopped} (the kernel sampled EOS) or {@code max_tokens} text tokens exist, and every
 * {@code state} not carried on is unpersisted. Partition {@code codec} runs from its stream buffer and is done when a
 * pass reports {@code partition_done}. Audio chunks carry {@code sample_rate} and {@code channels}.
 */
public final class ToyTtsPolicy implements ConductorPolicy {

    @Override
    public String model() {
        return ToyTtsModel.NAME;
    }

    @Override
    public Map<String, String> inputDtypes() {
        return Map.of(ToyTtsModel.TEXT_INPUT, ToyTtsModel.INPUT_DTYPE);
    }

    @Override
    public void validate(PolicyRequest request) {
        List<TensorPointerInfo> text = request.inputs().get(ToyTtsModel.TEXT_INPUT);
        if (text == null || text.size() != 1 || text.get(0).dims().size() != 1) {
            throw new ModelInputException("toy-tts needs one input 'text': the prompt as UTF-8 bytes (1-D uint8)");
        }
        long bytes = text.get(0).dims().get(0);
        if (bytes > ToyTtsModel.MAX_PROMPT_BYTES) {
            throw new ModelInputException("toy-tts prompts are at most " + ToyTtsModel.MAX_PROMPT_BYTES
                    + " UTF-8 bytes, this one has " + bytes);
        }
    }

    @Override
    public Step initial(String partition, PolicyRequest request) {
        if (partition.equals(ToyTtsModel.CODEC_PARTITION)) {
            return new Step(ToyTtsModel.CODEC_WALK, Map.of(), Map.of(), Map.of());
        }
        if (!partition.equals(ToyTtsModel.LM_PARTITION)) {
            throw new PolicyException("toy-tts has no partition '" + partition + "'");
        }
        return new Step(ToyTtsModel.PREFILL, Map.of(ToyTtsModel.TEXT_INPUT,
                request.inputs().get(ToyTtsModel.TEXT_INPUT)), Map.of(), Map.of());
    }

    @Override
    public Transition next(PassResult result, PolicyRequest request) {
        if (result.partition().equals(ToyTtsModel.CODEC_PARTITION)) {
            return result.partitionDone() ? Transition.done(List.of()) : Transition.awaitStream();
        }
        String walk = result.step().walk();
        List<TensorPointerInfo> state = result.persisted().get(ToyTtsModel.STATE);
        if (state == null || state.isEmpty()) {
            throw new PolicyException("toy-tts " + walk + " pass persisted no '" + ToyTtsModel.STATE + "'");
        }
        List<TensorPointerInfo> consumed = result.step().inputs().getOrDefault(ToyTtsModel.STATE, List.of());
        List<TensorPointerInfo> stopped = result.persisted().getOrDefault(ToyTtsModel.STOPPED, List.of());
        int left = request.maxTokens() - result.tokensProduced();
        if (!stopped.isEmpty() || left <= 0) {
            List<TensorPointerInfo> unpersist = new ArrayList<>(consumed);
            unpersist.addAll(state);
            unpersist.addAll(stopped);
            return Transition.done(unpersist);
        }
        Step decode = new Step(ToyTtsModel.DECODE, Map.of(ToyTtsModel.STATE, state), Map.of(),
                Map.of(ToyTtsModel.DECODE_LOOP, Math.min(ToyTtsModel.DECODE_MAX_ITERS, left)));
        return Transition.next(decode, consumed);
    }

    @Override
    public Map<String, Object> chunkMetadata(String modality, String signal) {
        if (ToyTtsModel.AUDIO_MODALITY.equals(modality)) {
            return Map.of("sample_rate", ToyTtsModel.SAMPLE_RATE, "channels", ToyTtsModel.CHANNELS);
        }
        return Map.of();
    }
}
