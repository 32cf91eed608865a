package io.mstar.graph;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.mstar.graph.Graphs.edge;
import static io.mstar.graph.Graphs.loop;
import static io.mstar.graph.Graphs.node;
import static io.mstar.graph.Graphs.seq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GraphValidationTests {

    @Test
    void duplicateNodeInAWalkIsRejectedNamingTheNode() {
        GraphModelException e = catchThrowableOfType(() -> new GraphWalk("decode",
                seq(node("llm", List.of()), loop("l", 2, node("llm", List.of())))), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("node 'llm'");
        assertThat(e.getMessage()).contains("decode");
    }

    @Test
    void edgeToUnknownNodeIsRejectedNamingEdgeAndTarget() {
        GraphModelException e = catchThrowableOfType(() -> new GraphWalk("prefill",
                node("llm", List.of(), edge("h", "codec"))), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("node 'llm' edge 'h'");
        assertThat(e.getMessage()).contains("'codec'");
    }

    @Test
    void loopOutputToUnknownNodeIsRejected() {
        GraphModelException e = catchThrowableOfType(() -> new GraphWalk("w",
                loop("gen", 2, node("a", List.of()), edge("o", "nowhere"))), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("loop 'gen' edge 'o'");
    }

    @Test
    void specialDestinationsAreAccepted() {
        assertThatNoException().isThrownBy(() -> new GraphWalk("w",
                node("a", List.of(), edge("t", SpecialDestinations.EMIT_TO_CLIENT), edge("p", SpecialDestinations.PERSIST_ONLY))));
    }

    @Test
    void maxItersBelowOneIsRejectedNamingTheLoop() {
        GraphModelException e = catchThrowableOfType(() -> loop("gen", 0, node("a", List.of())), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("loop 'gen'");
        assertThat(e.getMessage()).contains("max_iters");
    }

    @Test
    void modelGraphDefaultsToOneDefaultPartitionInWalkOrder() {
        ModelGraph g = new ModelGraph("m", List.of(new GraphWalk("prefill", node("a", List.of())),
                new GraphWalk("decode", node("a", List.of()))));

        assertThat(g.partitions()).isEqualTo(Map.of("default", List.of("prefill", "decode")));
    }

    @Test
    void partitionNamingUnknownWalkIsRejected() {
        GraphModelException e = catchThrowableOfType(() -> new ModelGraph("m",
                List.of(new GraphWalk("prefill", node("a", List.of()))), Map.of("p", List.of("decode"))),
                GraphModelException.class);

        assertThat(e.subject()).isEqualTo("partition 'p'");
    }
}
