package io.mstar.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.Loop;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;

class ToyTtsModelTests {

    @Test
    void theBuiltInDeploymentPutsLmOnWorkerOneAndTheCodecOnWorkerZero() {
        DeploymentConfig config = DeploymentConfig.loadDefault();
        List<WorkerGraph> graphs = WorkerGraphSplit.split(config, ModelGraphs.of(config.models().stream()
                .map(m -> m.name()).toList())).stream().filter(g -> g.model().equals(ToyTtsModel.NAME)).toList();

        assertThat(graphs).extracting(WorkerGraph::walk, WorkerGraph::nodeGroupIndex, WorkerGraph::nodeNames)
                .containsExactly(
                        tuple(ToyTtsModel.PREFILL, 1, List.of(ToyTtsModel.LM)),
                        tuple(ToyTtsModel.DECODE, 1, List.of(ToyTtsModel.LM)),
                        tuple(ToyTtsModel.CODEC_WALK, 0, List.of(ToyTtsModel.CODEC)));
        assertThat(graphs.get(1).piece()).isInstanceOfSatisfying(Loop.class, loop -> {
            assertThat(loop.name()).isEqualTo(ToyTtsModel.DECODE_LOOP);
            assertThat(loop.maxIters()).isEqualTo(ToyTtsModel.DECODE_MAX_ITERS);
        });
        assertThat(config.models().stream().filter(m -> m.name().equals(ToyTtsModel.NAME)).findFirst().orElseThrow()
                .kvCache()).as("lm keeps a KV cache").isPresent();
    }

    @Test
    void lmIsOneNodeInTwoWalksAndTheCodecConsumesTheStream() {
        ModelGraph graph = ToyTtsModel.graph();
        assertThat(graph.partitions()).isEqualTo(Map.of(
                ToyTtsModel.LM_PARTITION, List.of(ToyTtsModel.PREFILL, ToyTtsModel.DECODE),
                ToyTtsModel.CODEC_PARTITION, List.of(ToyTtsModel.CODEC_WALK)));
        assertThat(graph.walks().get(0).root().nodes().get(ToyTtsModel.LM).inputNames())
                .containsExactly(ToyTtsModel.TEXT_INPUT);
        assertThat(graph.walks().get(1).root().nodes().get(ToyTtsModel.LM).inputNames())
                .containsExactly(ToyTtsModel.STATE);
        assertThat(graph.walks().get(2).root().nodes().get(ToyTtsModel.CODEC).consumesStream()).isTrue();
    }

    @Test
    void audioChunksFollowTheSlidingWindow() {
        assertThat(ToyTtsModel.audioChunks(0)).isZero();
        assertThat(ToyTtsModel.audioChunks(1)).isEqualTo(1);
        assertThat(ToyTtsModel.audioChunks(8)).isEqualTo(1);
        assertThat(ToyTtsModel.audioChunks(9)).isEqualTo(2);
        assertThat(ToyTtsModel.audioChunks(12)).isEqualTo(2);
        assertThat(ToyTtsModel.audioChunks(13)).isEqualTo(3);
        // a brute-force count of windows holding fresh tokens: 8 fresh, then 4 at a time
        for (int n = 0; n < 200; n++) {
            int chunks = 0;
            int delivered = 0;
            while (delivered < n) {
                delivered += chunks == 0 ? 8 : 4;
                chunks++;
            }
            assertThat(ToyTtsModel.audioChunks(n)).as("%d tokens", n).isEqualTo(chunks);
        }
    }
}
