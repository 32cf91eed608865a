package io.mstar.graph;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StreamingEdgeValidationTests {

    private static GraphWalk producer(String target, String partition) {
        GraphEdge stream = GraphEdge.builder(target, "s").isStreaming(true).targetPartition(partition).build();
        return new GraphWalk("produce", new GraphNode("p", Set.of("x"), List.of(stream), false));
    }

    private static GraphWalk consumer() {
        return new GraphWalk("consume", new GraphNode("c", Set.of("s"), List.of(), true));
    }

    @Test
    void streamingEdgeMayNameANodeOfItsTargetPartition() {
        ModelGraph graph = new ModelGraph("m", List.of(producer("c", "sink"), consumer()),
                Map.of("default", List.of("produce"), "sink", List.of("consume")));
        assertThat(graph.partitions()).containsKeys("default", "sink");
    }

    @Test
    void streamingEdgeIntoAnUnknownPartitionIsNamed() {
        assertThatThrownBy(() -> new ModelGraph("m", List.of(producer("c", "nowhere"), consumer()),
                Map.of("default", List.of("produce"), "sink", List.of("consume"))))
                .isInstanceOf(GraphModelException.class).hasMessageContaining("nowhere");
    }

    @Test
    void streamingEdgeToANodeOutsideItsTargetPartitionIsNamed() {
        assertThatThrownBy(() -> new ModelGraph("m", List.of(producer("q", "sink"), consumer()),
                Map.of("default", List.of("produce"), "sink", List.of("consume"))))
                .isInstanceOf(GraphModelException.class).hasMessageContaining("'q'");
    }

    @Test
    void nonStreamingEdgeToAnotherWalkIsStillRefused() {
        GraphEdge plain = new GraphEdge("c", "s", List.of());
        assertThatThrownBy(() -> new GraphWalk("produce", new GraphNode("p", Set.of("x"), List.of(plain), false)))
                .isInstanceOf(GraphModelException.class).hasMessageContaining("next_node 'c'");
    }
}
