package io.mstar.model;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

class MiniLmModelTests {

    @Test
    void defaultDeploymentPlacesTheEncoderOnWorkerZero() {
        DeploymentConfig config = DeploymentConfig.loadDefault();
        List<WorkerGraph> graphs = WorkerGraphSplit.split(config, ModelGraphs.of(config.models().stream()
                .map(m -> m.name()).toList())).stream().filter(g -> g.model().equals(MiniLmModel.NAME)).toList();

        assertThat(graphs).extracting(WorkerGraph::walk, WorkerGraph::nodeGroupIndex, WorkerGraph::nodeNames)
                .containsExactly(tuple(MiniLmModel.EMBED, 0, List.of(MiniLmModel.ENCODE)));
        assertThat(config.models()).anySatisfy(m -> {
            assertThat(m.name()).isEqualTo(MiniLmModel.NAME);
            assertThat(m.nodeGroups().get(0).workers()).containsExactly(0);
        });
    }

    @Test
    void oneWalkEmitsTheEmbeddingAndTheUsageToTheClient() {
        ModelGraph graph = ModelGraphs.of(MiniLmModel.NAME);
        assertThat(graph.partitions()).isEqualTo(Map.of(ModelGraph.DEFAULT_PARTITION, List.of(MiniLmModel.EMBED)));
        var encode = graph.walks().get(0).root().nodes().get(MiniLmModel.ENCODE);
        assertThat(encode.inputNames()).containsExactly(MiniLmModel.TEXT);
        assertThat(encode.outputs()).extracting(GraphEdge::nextNode, GraphEdge::name, GraphEdge::outputModality)
                .containsExactly(
                        tuple(SpecialDestinations.EMIT_TO_CLIENT, MiniLmModel.EMBEDDING, MiniLmModel.EMBEDDING_MODALITY),
                        tuple(SpecialDestinations.EMIT_TO_CLIENT, MiniLmModel.NUM_TOKENS, MiniLmModel.USAGE_MODALITY));
    }
}
