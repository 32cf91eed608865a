package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class BuilderTests {

    @Test
    void buildersStartAtTheSpecDefaults() {
        assertThat(WorkerGraphsDone.builder("r", List.of(1), true).build())
                .isEqualTo(new WorkerGraphsDone("r", List.of(1), true));
        assertThat(GraphEdge.builder("llm", "x").build()).isEqualTo(new GraphEdge("llm", "x", List.of()));
        assertThat(TensorPointerInfo.builder(1, List.of(2L), List.of(1L), "f32", 8, 64, "h:1", "worker-0").build())
                .isEqualTo(new TensorPointerInfo(1, List.of(2L), List.of(1L), "f32", 8, 64, "h:1", "worker-0"));
    }

    @Test
    void toBuilderReproducesEveryFieldAndSettersChangeOnlyTheirOwn() {
        WorkerGraphsDone golden = (WorkerGraphsDone) GoldenMessages.conductor()
                .get(ConductorMessageType.WORKER_GRAPHS_DONE).body();
        assertThat(golden.toBuilder().build()).isEqualTo(golden);
        WorkerGraphsDone changed = golden.toBuilder().partitionDone(false).newTokenCounts(Map.of("t", 1)).build();
        assertThat(changed.partitionDone()).isFalse();
        assertThat(changed.newTokenCounts()).containsExactly(Map.entry("t", 1));
        assertThat(changed.graphTimings()).isEqualTo(golden.graphTimings());

        GraphEdge edge = GoldenMessages.edge();
        assertThat(edge.toBuilder().build()).isEqualTo(edge);
        assertThat(edge.toBuilder().shardDim(null).build().shardDim()).isNull();

        TensorPointerInfo tensor = GoldenMessages.tensor(7, "llm");
        assertThat(tensor.toBuilder().build()).isEqualTo(tensor);
        TensorPointerInfo moved = tensor.toBuilder().offset(0).shmSegment(null).build();
        assertThat(moved.offset()).isZero();
        assertThat(moved.shmSegment()).isNull();
        assertThat(moved.uuid()).isEqualTo(7);
    }
}
