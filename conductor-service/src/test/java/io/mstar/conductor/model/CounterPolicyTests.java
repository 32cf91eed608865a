package io.mstar.conductor.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.CounterModel;

class CounterPolicyTests {

    private final CounterPolicy policy = new CounterPolicy();
    private final TensorPointerInfo tokens = descriptor(1, "conductor");

    @Test
    void prefillTakesTheTokensAndCarriesStopAtAsStepMetadata() {
        Step step = policy.initial("default", request(10, Map.of("stop_at", "7")));

        assertThat(step.walk()).isEqualTo(CounterModel.PREFILL);
        assertThat(step.inputs()).containsExactly(Map.entry(CounterModel.TOKENS, List.of(tokens)));
        assertThat(step.stepMetadata()).containsExactly(Map.entry(CounterModel.STOP_AT, "7"));
        assertThat(step.dynamicLoopIterCounts()).isEmpty();
    }

    @Test
    void detokStartsWithNoInputsAndWaitsForItsStreamUntilPartitionDone() {
        Step chunk = policy.initial("detok", request(10, Map.of()));
        assertThat(chunk.walk()).isEqualTo(CounterModel.CHUNK);
        assertThat(chunk.inputs()).isEmpty();

        assertThat(policy.next(new PassResult("detok", chunk, 0, Map.of(), Map.of(), 0, false), request(10, Map.of())).kind())
                .isEqualTo(Transition.Kind.AWAIT_STREAM);
        assertThat(policy.next(new PassResult("detok", chunk, 1, Map.of(), Map.of(), 0, true), request(10, Map.of())).kind())
                .isEqualTo(Transition.Kind.DONE);
    }

    @Test
    void prefillIsFollowedByDecodeWithTheStateAndMinOfFourAndTokensLeft() {
        TensorPointerInfo s0 = descriptor(100, "worker-1");
        Step prefill = policy.initial("default", request(3, Map.of()));

        Transition t = policy.next(new PassResult("default", prefill, 0, Map.of("state", List.of(s0)), Map.of(), 0, false),
                request(3, Map.of()));

        assertThat(t.kind()).isEqualTo(Transition.Kind.NEXT);
        assertThat(t.next().walk()).isEqualTo(CounterModel.DECODE);
        assertThat(t.next().inputs()).containsExactly(Map.entry("state", List.of(s0)));
        assertThat(t.next().dynamicLoopIterCounts()).containsExactly(Map.entry(CounterModel.DECODE_LOOP, 3));
        assertThat(t.unpersist()).isEmpty();
    }

    @Test
    void aFullDecodePassContinuesWithTheNewStateAndUnpersistsTheOldOne() {
        TensorPointerInfo s0 = descriptor(100, "worker-1");
        TensorPointerInfo s1 = descriptor(101, "worker-1");
        Step decode = new Step(CounterModel.DECODE, Map.of("state", List.of(s0)), Map.of(), Map.of(CounterModel.DECODE_LOOP, 4));

        Transition t = policy.next(new PassResult("default", decode, 1, Map.of("state", List.of(s1)),
                Map.of("token", 4), 4, false), request(10, Map.of()));

        assertThat(t.kind()).isEqualTo(Transition.Kind.NEXT);
        assertThat(t.next().inputs()).containsExactly(Map.entry("state", List.of(s1)));
        assertThat(t.next().dynamicLoopIterCounts()).containsExactly(Map.entry(CounterModel.DECODE_LOOP, 4));
        assertThat(t.unpersist()).containsExactly(s0);
    }

    @Test
    void aDecodePassThatPersistedStoppedEndsThePartitionUnpersistingEverything() {
        TensorPointerInfo s0 = descriptor(100, "worker-1");
        TensorPointerInfo s1 = descriptor(101, "worker-1");
        TensorPointerInfo stopped = descriptor(102, "worker-1");
        Step decode = new Step(CounterModel.DECODE, Map.of("state", List.of(s0)), Map.of("stop_at", "5"),
                Map.of(CounterModel.DECODE_LOOP, 4));

        // The stop fell on the pass's last iteration: the pass ran all 4, yet the loop hit stop_at.
        Transition t = policy.next(new PassResult("default", decode, 1,
                Map.of("state", List.of(s1), CounterModel.STOPPED, List.of(stopped)),
                Map.of("token", 4), 4, false), request(10, Map.of("stop_at", "5")));

        assertThat(t.kind()).isEqualTo(Transition.Kind.DONE);
        assertThat(t.unpersist()).containsExactly(s0, s1, stopped);
    }

    @Test
    void aShortPassWithoutStoppedIsNotTakenForAStop() {
        TensorPointerInfo s0 = descriptor(100, "worker-1");
        TensorPointerInfo s1 = descriptor(101, "worker-1");
        Step decode = new Step(CounterModel.DECODE, Map.of("state", List.of(s0)), Map.of(), Map.of(CounterModel.DECODE_LOOP, 4));

        Transition t = policy.next(new PassResult("default", decode, 1, Map.of("state", List.of(s1)),
                Map.of("token", 2), 2, false), request(10, Map.of()));

        assertThat(t.kind()).isEqualTo(Transition.Kind.NEXT);
    }

    @Test
    void reachingMaxTokensEndsThePartition() {
        TensorPointerInfo s0 = descriptor(100, "worker-1");
        TensorPointerInfo s1 = descriptor(101, "worker-1");
        Step decode = new Step(CounterModel.DECODE, Map.of("state", List.of(s0)), Map.of(), Map.of(CounterModel.DECODE_LOOP, 1));

        Transition t = policy.next(new PassResult("default", decode, 2, Map.of("state", List.of(s1)),
                Map.of("token", 1), 5, false), request(5, Map.of()));

        assertThat(t.kind()).isEqualTo(Transition.Kind.DONE);
        assertThat(t.unpersist()).containsExactly(s0, s1);
    }

    @Test
    void aPassWithoutStateAndABadStopAtAreRefusedWithTypedErrors() {
        Step prefill = policy.initial("default", request(3, Map.of()));
        assertThatThrownBy(() -> policy.next(new PassResult("default", prefill, 0, Map.of(), Map.of(), 0, false),
                request(3, Map.of()))).isInstanceOf(PolicyException.class);
        assertThatThrownBy(() -> policy.validate(request(3, Map.of("stop_at", "seven"))))
                .isInstanceOf(ModelInputException.class);
    }

    private PolicyRequest request(int maxTokens, Map<String, String> kwargs) {
        return new PolicyRequest("r-1", maxTokens, kwargs, Map.of(CounterModel.TOKENS, List.of(tokens)));
    }

    private static TensorPointerInfo descriptor(long uuid, String entity) {
        return new TensorPointerInfo(uuid, List.of(3L), List.of(1L), "int32", 12, 0, "127.0.0.1:1", entity);
    }
}
