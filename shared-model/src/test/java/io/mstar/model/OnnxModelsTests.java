package io.mstar.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.DeploymentConfigException;
import io.mstar.deployment.OnnxNodeConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;

/** A model made of ONNX files: its deployment section, checked key by key, and the one-walk graph built from it. */
class OnnxModelsTests {

    private static final String TWO_NODES = """
            models:
              - name: mine
                onnx:
                  inputs: {x: float32}
                  outputs: [y, h]
                  nodes:
                    - name: hidden
                      file: onnx/hidden.onnx
                      inputs: {x: X}
                      outputs: {H: h}
                    - name: head
                      file: /models/head.onnx
                      inputs: {h: H, x: X}
                      outputs: {Y: y}
                      batching: pad
                      pad_axes: [seq]
                      mask: attention_mask
                      threads: 2
                node_groups:
                  - node_names: [hidden]
                    workers: [0]
                  - node_names: [head]
                    workers: [1]
            """;

    @Test
    void theSectionParsesWithItsDefaultsAndFilesResolveBesideTheDeploymentFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("deployment.yaml"), TWO_NODES);
        var onnx = DeploymentConfig.load(file).models().get(0).onnx().orElseThrow();
        assertThat(onnx.inputs()).isEqualTo(Map.of("x", "float32"));
        assertThat(onnx.outputs()).containsExactly("y", "h");
        OnnxNodeConfig hidden = onnx.nodes().get(0);
        assertThat(hidden.file()).isEqualTo(dir.resolve("onnx/hidden.onnx").toString());
        assertThat(hidden.batching()).isEqualTo(OnnxNodeConfig.PER_REQUEST);
        assertThat(hidden.threads()).isEmpty();
        OnnxNodeConfig head = onnx.nodes().get(1);
        assertThat(head.file()).isEqualTo("/models/head.onnx");
        assertThat(head.padAxes()).containsExactly("seq");
        assertThat(head.mask()).contains("attention_mask");
        assertThat(head.threads()).contains(2);
    }

    @Test
    void theGraphIsOneWalkWhoseOutputsGoToLaterNodesAndTheClient() {
        DeploymentConfig config = DeploymentConfig.parse(TWO_NODES, "t.yaml");
        ModelGraph graph = ModelGraphs.of(config).get("mine");
        assertThat(graph.partitions()).isEqualTo(Map.of(ModelGraph.DEFAULT_PARTITION, List.of(OnnxModels.RUN)));
        var nodes = graph.walks().get(0).root().nodes();
        assertThat(nodes.get("hidden").inputNames()).containsExactly("x");
        assertThat(nodes.get("hidden").outputs()).extracting(GraphEdge::nextNode, GraphEdge::name)
                .containsExactly(tuple("head", "h"), tuple(SpecialDestinations.EMIT_TO_CLIENT, "h"));
        assertThat(nodes.get("head").inputNames()).containsExactlyInAnyOrder("h", "x");
        assertThat(nodes.get("head").outputs()).extracting(GraphEdge::nextNode, GraphEdge::name,
                GraphEdge::outputModality).containsExactly(tuple(SpecialDestinations.EMIT_TO_CLIENT, "y",
                OnnxModels.MODALITY));
        List<WorkerGraph> split = WorkerGraphSplit.split(config, ModelGraphs.of(config));
        assertThat(split).extracting(WorkerGraph::nodeGroupIndex, WorkerGraph::nodeNames)
                .containsExactly(tuple(0, List.of("hidden")), tuple(1, List.of("head")));
    }

    @Test
    void theDigestSeesTheSection() {
        DeploymentConfig a = DeploymentConfig.parse(TWO_NODES, "a.yaml");
        DeploymentConfig b = DeploymentConfig.parse(TWO_NODES.replace("threads: 2", "threads: 3"), "b.yaml");
        assertThat(a.digest()).isNotEqualTo(b.digest());
        assertThat(a.digest()).isEqualTo(DeploymentConfig.parse(TWO_NODES, "c.yaml").digest());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {z: Z}, outputs: {Y: y}}]} | models[0].onnx.nodes[0].inputs.z: is neither a request input
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y, W: w}}]} | models[0].onnx.nodes[0].outputs: signal 'w' goes nowhere
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: x}}]} | models[0].onnx.nodes[0].outputs: signal 'x' is produced twice
            {inputs: {x: float32}, outputs: [y, q], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y}}]} | models[0].onnx.outputs[1]: 'q' is no node's output
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y}, batching: chunks}]} | models[0].onnx.nodes[0].batching: must be per_request or pad
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y}, batching: pad}]} | models[0].onnx.nodes[0].pad_axes: is required with batching: pad
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y}, mask: m}]} | models[0].onnx.nodes[0].mask: is for batching: pad
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, inputs: {x: X}, outputs: {Y: y}}]} | models[0].onnx.nodes[0].file: is required
            {inputs: {}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y}}]} | models[0].onnx.inputs: must be a non-empty mapping
            {inputs: {x: float32}, outputs: [y], nodes: [{name: a, file: a.onnx, inputs: {x: X}, outputs: {Y: y}, thread: 2}]} | models[0].onnx.nodes[0].thread: unknown key
            """)
    void badSectionsNameTheOffendingKey(String onnx, String expected) {
        String yaml = "models: [{name: m, onnx: " + onnx + ", node_groups: [{node_names: [a], workers: [0]}]}]";
        assertThatThrownBy(() -> DeploymentConfig.parse(yaml, "bad.yaml")).isInstanceOf(DeploymentConfigException.class)
                .hasMessageContaining(expected);
    }
}
