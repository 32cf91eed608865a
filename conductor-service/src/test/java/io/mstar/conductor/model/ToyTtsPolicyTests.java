package io.mstar.conductor.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.ToyTtsModel;

class ToyTtsPolicyTests {

    private final ToyTtsPolicy policy = new ToyTtsPolicy();
    private final TensorPointerInfo prompt = descriptor(1, "conductor", 11);

    @Test
    void isRegisteredAndTakesTheUtf8Prompt() {
        assertThat(ConductorPolicies.builtIn().of(ToyTtsModel.NAME)).containsInstanceOf(ToyTtsPolicy.class);
        assertThat(policy.inputDtypes()).containsExactly(Map.entry("text", "uint8"));
    }

    @Test
    void lmStartsWithPrefillOfThePromptAndCodecWaitsForItsStream() {
        Step prefill = policy.initial(ToyTtsModel.LM_PARTITION, request(10));
        assertThat(prefill.walk()).isEqualTo(ToyTtsModel.PREFILL);
        assertThat(prefill.inputs()).containsExactly(Map.entry(ToyTtsModel.TEXT_INPUT, List.of(prompt)));

        Step codec = policy.initial(ToyTtsModel.CODEC_PARTITION, request(10));
        assertThat(codec.walk()).isEqualTo(ToyTtsModel.CODEC_WALK);
        assertThat(codec.inputs()).isEmpty();
        assertThat(policy.next(new PassResult(ToyTtsModel.CODEC_PARTITION, codec, 0, Map.of(), Map.of(), 0, false),
                request(10)).kind()).isEqualTo(Transition.Kind.AWAIT_STREAM);
        assertThat(policy.next(new PassResult(ToyTtsModel.CODEC_PARTITION, codec, 3, Map.of(), Map.of(), 0, true),
                request(10)).kind()).isEqualTo(Transition.Kind.DONE);
        assertThatThrownBy(() -> policy.initial("default", request(10))).isInstanceOf(PolicyException.class);
    }

    @Test
    void decodePassesRunMinOf16AndTokensLeftAndUnpersistTheConsumedState() {
        TensorPointerInfo s0 = descriptor(100, "worker-1", 2);
        TensorPointerInfo s1 = descriptor(101, "worker-1", 2);
        Step prefill = policy.initial(ToyTtsModel.LM_PARTITION, request(40));

        Transition first = policy.next(new PassResult(ToyTtsModel.LM_PARTITION, prefill, 0,
                Map.of(ToyTtsModel.STATE, List.of(s0)), Map.of(), 0, false), request(40));
        assertThat(first.kind()).isEqualTo(Transition.Kind.NEXT);
        assertThat(first.next().walk()).isEqualTo(ToyTtsModel.DECODE);
        assertThat(first.next().inputs()).containsExactly(Map.entry(ToyTtsModel.STATE, List.of(s0)));
        assertThat(first.next().dynamicLoopIterCounts()).containsExactly(Map.entry(ToyTtsModel.DECODE_LOOP, 16));
        assertThat(first.unpersist()).isEmpty();

        Transition second = policy.next(new PassResult(ToyTtsModel.LM_PARTITION, first.next(), 1,
                Map.of(ToyTtsModel.STATE, List.of(s1)), Map.of(ToyTtsModel.TEXT, 16), 32, false), request(40));
        assertThat(second.next().dynamicLoopIterCounts()).containsExactly(Map.entry(ToyTtsModel.DECODE_LOOP, 8));
        assertThat(second.next().inputs()).containsExactly(Map.entry(ToyTtsModel.STATE, List.of(s1)));
        assertThat(second.unpersist()).containsExactly(s0);
    }

    @Test
    void eosEndsLmEvenOnAFullPassAndMaxTokensEndsItOtherwise() {
        TensorPointerInfo s0 = descriptor(100, "worker-1", 2);
        TensorPointerInfo s1 = descriptor(101, "worker-1", 2);
        TensorPointerInfo stopped = descriptor(102, "worker-1", 1);
        Step decode = new Step(ToyTtsModel.DECODE, Map.of(ToyTtsModel.STATE, List.of(s0)), Map.of(),
                Map.of(ToyTtsModel.DECODE_LOOP, 16));

        Transition eos = policy.next(new PassResult(ToyTtsModel.LM_PARTITION, decode, 2,
                Map.of(ToyTtsModel.STATE, List.of(s1), ToyTtsModel.STOPPED, List.of(stopped)),
                Map.of(ToyTtsModel.TEXT, 15), 31, false), request(100));
        assertThat(eos.kind()).isEqualTo(Transition.Kind.DONE);
        assertThat(eos.unpersist()).containsExactly(s0, s1, stopped);

        Transition max = policy.next(new PassResult(ToyTtsModel.LM_PARTITION, decode, 2,
                Map.of(ToyTtsModel.STATE, List.of(s1)), Map.of(ToyTtsModel.TEXT, 16), 32, false), request(32));
        assertThat(max.kind()).isEqualTo(Transition.Kind.DONE);
        assertThat(max.unpersist()).containsExactly(s0, s1);

        assertThat(policy.next(new PassResult(ToyTtsModel.LM_PARTITION, decode, 2,
                Map.of(ToyTtsModel.STATE, List.of(s1)), Map.of(ToyTtsModel.TEXT, 16), 32, false), request(33)).kind())
                .isEqualTo(Transition.Kind.NEXT);
    }

    @Test
    void audioChunksCarrySampleRateAndChannelsAndTextChunksNothingExtra() {
        assertThat(policy.chunkMetadata("audio", ToyTtsModel.AUDIO))
                .containsOnly(Map.entry("sample_rate", 16000), Map.entry("channels", 1));
        assertThat(policy.chunkMetadata("text", ToyTtsModel.TEXT)).isEmpty();
        assertThat(new CounterPolicy().chunkMetadata("text", "token")).isEmpty();
    }

    @Test
    void aPassWithoutStateAndAnOverlongOrMissingPromptAreTypedErrors() {
        Step prefill = policy.initial(ToyTtsModel.LM_PARTITION, request(3));
        assertThatThrownBy(() -> policy.next(new PassResult(ToyTtsModel.LM_PARTITION, prefill, 0, Map.of(), Map.of(),
                0, false), request(3))).isInstanceOf(PolicyException.class);
        PolicyRequest tooLong = new PolicyRequest("r", 3, Map.of(), Map.of(ToyTtsModel.TEXT_INPUT,
                List.of(descriptor(5, "conductor", ToyTtsModel.MAX_PROMPT_BYTES + 1))));
        assertThatThrownBy(() -> policy.validate(tooLong)).isInstanceOf(ModelInputException.class);
        assertThatThrownBy(() -> policy.validate(new PolicyRequest("r", 3, Map.of(), Map.of())))
                .isInstanceOf(ModelInputException.class);
        policy.validate(request(3));
    }

    private PolicyRequest request(int maxTokens) {
        return new PolicyRequest("r-1", maxTokens, Map.of(), Map.of(ToyTtsModel.TEXT_INPUT, List.of(prompt)));
    }

    private static TensorPointerInfo descriptor(long uuid, String entity, long n) {
        return new TensorPointerInfo(uuid, List.of(n), List.of(1L), "uint8", n, 0, "127.0.0.1:1", entity);
    }
}
