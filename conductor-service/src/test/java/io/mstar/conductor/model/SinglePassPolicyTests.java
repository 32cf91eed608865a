package io.mstar.conductor.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.OnnxModels;

/** The stock single-pass policy, and the conductor's policies for a deployment with a model made of ONNX files. */
class SinglePassPolicyTests {

    private final TensorPointerInfo x = new TensorPointerInfo(1, List.of(2L, 4L), List.of(4L, 1L), "float32", 32, 0,
            "127.0.0.1:1", "conductor");

    @Test
    void aDeploymentsOnnxModelGetsTheSinglePassPolicyBesideTheBuiltInOnes() {
        DeploymentConfig config = DeploymentConfig.parse("""
                models:
                  - name: mine
                    onnx:
                      inputs: {x: float32, ids: int64}
                      outputs: [y]
                      nodes: [{name: a, file: a.onnx, inputs: {x: X, ids: I}, outputs: {Y: y}}]
                    node_groups: [{node_names: [a], workers: [0]}]
                """, "t.yaml");
        ConductorPolicies policies = ConductorPolicies.forDeployment(config);
        ConductorPolicy mine = policies.of("mine").orElseThrow();
        assertThat(mine.inputDtypes()).containsOnlyKeys("x", "ids").containsEntry("ids", "int64");
        assertThat(policies.of("minilm-embed")).isPresent();
        assertThat(policies.of("other")).isEmpty();
    }

    @Test
    void onePassOfTheWalkWithTheClientsInputsThenDone() {
        SinglePassPolicy policy = new SinglePassPolicy("mine", Map.of("x", "float32"), OnnxModels.RUN);
        PolicyRequest request = new PolicyRequest("r", 1, Map.of(), Map.of("x", List.of(x)));
        policy.validate(request);
        Step step = policy.initial("default", request);
        assertThat(step.walk()).isEqualTo(OnnxModels.RUN);
        assertThat(step.inputs()).isEqualTo(Map.of("x", List.of(x)));
        Transition next = policy.next(null, request);
        assertThat(next.kind()).isEqualTo(Transition.Kind.DONE);
        assertThat(next.unpersist()).isEmpty();
    }

    @Test
    void twoTensorsForOneInputAndAnotherPartitionAreRefused() {
        SinglePassPolicy policy = new SinglePassPolicy("mine", Map.of("x", "float32"), OnnxModels.RUN);
        assertThatThrownBy(() -> policy.validate(new PolicyRequest("r", 1, Map.of(), Map.of("x", List.of(x, x)))))
                .isInstanceOf(ModelInputException.class).hasMessageContaining("'x' has 2");
        assertThatThrownBy(() -> policy.initial("detok", new PolicyRequest("r", 1, Map.of(), Map.of("x", List.of(x)))))
                .isInstanceOf(PolicyException.class);
    }
}
