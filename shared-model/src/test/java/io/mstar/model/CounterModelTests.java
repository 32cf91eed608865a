package io.mstar.model;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphModelException;
import io.mstar.graph.Loop;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

class CounterModelTests {

    @Test
    void defaultDeploymentSplitsPrefillAcrossBothGroupsAndKeepsTheLoopWhole() {
        DeploymentConfig config = DeploymentConfig.loadDefault();
        List<WorkerGraph> graphs = WorkerGraphSplit.split(config, ModelGraphs.of(config.models().stream()
                .map(m -> m.name()).toList())).stream().filter(g -> g.model().equals(CounterModel.NAME)).toList();

        assertThat(graphs).extracting(WorkerGraph::id, WorkerGraph::walk, WorkerGraph::nodeGroupIndex, WorkerGraph::nodeNames)
                .containsExactly(
                        tuple(0, CounterModel.PREFILL, 0, List.of(CounterModel.EMBED, CounterModel.OFFSET)),
                        tuple(1, CounterModel.PREFILL, 1, List.of(CounterModel.COUNT)),
                        tuple(2, CounterModel.DECODE, 1, List.of(CounterModel.STEP)),
                        tuple(3, CounterModel.CHUNK, 0, List.of(CounterModel.DETOK)));
        assertThat(graphs.get(2).piece()).isInstanceOfSatisfying(Loop.class, loop -> {
            assertThat(loop.name()).isEqualTo(CounterModel.DECODE_LOOP);
            assertThat(loop.maxIters()).isEqualTo(CounterModel.DECODE_MAX_ITERS);
        });
    }

    @Test
    void partitionsSeparateTheStreamingConsumer() {
        ModelGraph graph = CounterModel.graph();
        assertThat(graph.partitions()).isEqualTo(Map.of(
                ModelGraph.DEFAULT_PARTITION, List.of(CounterModel.PREFILL, CounterModel.DECODE),
                CounterModel.DETOK_PARTITION, List.of(CounterModel.CHUNK)));
        assertThat(graph.walks().get(2).root().nodes().get(CounterModel.DETOK).consumesStream()).isTrue();
    }

    @Test
    void unknownModelIsNamed() {
        assertThatThrownBy(() -> ModelGraphs.of("nope")).isInstanceOf(GraphModelException.class).hasMessageContaining("nope");
    }
}
