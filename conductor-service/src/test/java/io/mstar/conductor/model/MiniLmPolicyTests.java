package io.mstar.conductor.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.MiniLmModel;

class MiniLmPolicyTests {

    private final MiniLmPolicy policy = new MiniLmPolicy();
    private final TensorPointerInfo text = new TensorPointerInfo(1, List.of(21L), List.of(1L), "uint8", 21, 0,
            "127.0.0.1:1", "conductor");

    @Test
    void isRegisteredAndTakesUtf8Text() {
        assertThat(ConductorPolicies.builtIn().of(MiniLmModel.NAME)).containsInstanceOf(MiniLmPolicy.class);
        assertThat(policy.inputDtypes()).containsExactly(Map.entry("text", "uint8"));
    }

    @Test
    void oneEmbedPassWithTheTextThenDoneWithNothingToUnpersist() {
        PolicyRequest request = new PolicyRequest("r", 1, Map.of(), Map.of("text", List.of(text)));
        policy.validate(request);
        Step step = policy.initial("default", request);
        assertThat(step.walk()).isEqualTo(MiniLmModel.EMBED);
        assertThat(step.inputs()).containsExactly(Map.entry("text", List.of(text)));
        assertThat(step.dynamicLoopIterCounts()).isEmpty();

        Transition t = policy.next(new PassResult("default", step, 0, Map.of(), Map.of(), 0, false), request);
        assertThat(t.kind()).isEqualTo(Transition.Kind.DONE);
        assertThat(t.unpersist()).isEmpty();
    }

    @Test
    void emptyOrMissingTextAndUnknownPartitionsAreRefused() {
        TensorPointerInfo empty = new TensorPointerInfo(2, List.of(0L), List.of(1L), "uint8", 0, 0, "127.0.0.1:1",
                "conductor");
        assertThatThrownBy(() -> policy.validate(new PolicyRequest("r", 1, Map.of(), Map.of("text", List.of(empty)))))
                .isInstanceOf(ModelInputException.class).hasMessageContaining("non-empty");
        assertThatThrownBy(() -> policy.validate(new PolicyRequest("r", 1, Map.of(), Map.of())))
                .isInstanceOf(ModelInputException.class);
        assertThatThrownBy(() -> policy.initial("detok", new PolicyRequest("r", 1, Map.of(), Map.of("text", List.of(text)))))
                .isInstanceOf(PolicyException.class);
    }
}
