package io.mstar.graph;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.mstar.graph.Graphs.edge;
import static io.mstar.graph.Graphs.in;
import static io.mstar.graph.Graphs.loop;
import static io.mstar.graph.Graphs.node;
import static io.mstar.graph.Graphs.par;
import static io.mstar.graph.Graphs.seq;
import static org.assertj.core.api.Assertions.assertThat;

class SectionInputsOutputsTests {

    @Test
    void nodeEdgeToItselfIsLoopBackNotInputOrOutput() {
        GraphNode llm = node("llm", List.of("prompt", "token"), edge("token", "llm"), edge("text", "emit_to_client"));

        SectionInputsOutputs io = llm.inputsOutputs();

        assertThat(io.externalInputs()).containsExactlyInAnyOrder(in("prompt", "llm"));
        assertThat(io.loopBack()).containsExactly(in("token", "llm"));
        assertThat(io.externalOutputs()).extracting(GraphEdge::name).containsExactly("text");
    }

    @Test
    void sequentialMatchesOutputsToLaterInputsAndKeepsTheRestExternal() {
        Sequential s = seq(
                node("a", List.of("x"), edge("h", "b"), edge("side", "c")),
                node("b", List.of("h", "y"), edge("out", "emit_to_client")));

        SectionInputsOutputs io = s.inputsOutputs();

        assertThat(io.externalInputs()).containsExactlyInAnyOrder(in("x", "a"), in("y", "b"));
        assertThat(io.externalOutputs()).extracting(GraphEdge::name).containsExactly("side", "out");
        assertThat(io.loopBack()).isEmpty();
    }

    @Test
    void sequentialEdgeToEarlierNodeIsLoopBack() {
        Sequential s = seq(
                node("a", List.of("x", "fb"), edge("h", "b")),
                node("b", List.of("h"), edge("fb", "a"), edge("out", "")));

        SectionInputsOutputs io = s.inputsOutputs();

        assertThat(io.loopBack()).containsExactly(in("fb", "a"));
        assertThat(io.externalInputs()).containsExactly(in("x", "a"));
        assertThat(io.externalOutputs()).extracting(GraphEdge::name).containsExactly("out");
    }

    @Test
    void parallelInternalOnlyWhenAMemberProducesAndAMemberConsumes() {
        Parallel p = par(
                node("a", List.of("x"), edge("ha", "b"), edge("oa", "z")),
                node("b", List.of("ha", "hb")));

        SectionInputsOutputs io = p.inputsOutputs();

        assertThat(io.externalInputs()).containsExactlyInAnyOrder(in("x", "a"), in("hb", "b"));
        assertThat(io.externalOutputs()).extracting(GraphEdge::name).containsExactly("oa");
    }

    @Test
    void loopOutputsReplaceBodyOutputsAndBodyLoopBackSurvives() {
        Loop l = new Loop(seq(
                node("a", List.of("x", "fb"), edge("h", "b")),
                node("b", List.of("h"), edge("fb", "a"), edge("tok", "emit_to_client"))),
                8, List.of(edge("last", "c")), List.of(edge("all", "d")), "gen");

        SectionInputsOutputs io = l.inputsOutputs();

        assertThat(io.externalInputs()).containsExactly(in("x", "a"));
        assertThat(io.loopBack()).containsExactly(in("fb", "a"));
        assertThat(io.externalOutputs()).extracting(GraphEdge::name).containsExactly("last", "all");
    }

    @Test
    void nestedLoopsCarryInnerAndOuterLoopBacksAndOnlyOuterOutputs() {
        Loop inner = loop("inner", 4, node("b", List.of("h", "ib"), edge("ib", "b"), edge("bo", "c")), edge("io", "c"));
        Loop outer = loop("outer", 3, seq(
                node("a", List.of("x", "ob"), edge("h", "b")),
                inner,
                node("c", List.of("io"), edge("ob", "a"))), edge("final", "emit_to_client"));

        SectionInputsOutputs io = outer.inputsOutputs();

        assertThat(io.externalInputs()).containsExactly(in("x", "a"));
        assertThat(io.loopBack()).containsExactlyInAnyOrder(in("ib", "b"), in("ob", "a"));
        assertThat(io.externalOutputs()).extracting(GraphEdge::name).containsExactly("final");
        assertThat(outer.loops().keySet()).containsExactly("outer", "inner");
        assertThat(outer.nodes().keySet()).containsExactly("a", "b", "c");
    }
}
