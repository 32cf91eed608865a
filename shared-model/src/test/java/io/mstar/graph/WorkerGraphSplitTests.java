package io.mstar.graph;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static io.mstar.graph.Graphs.edge;
import static io.mstar.graph.Graphs.loop;
import static io.mstar.graph.Graphs.node;
import static io.mstar.graph.Graphs.par;
import static io.mstar.graph.Graphs.seq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class WorkerGraphSplitTests {

    private static NodeGroupConfig group(List<String> nodes, List<String> walks) {
        return new NodeGroupConfig(nodes, List.of(0), 1, walks);
    }

    private static NodeGroupConfig group(String... nodes) {
        return group(List.of(nodes), List.of());
    }

    private static ModelConfig model(String name, NodeGroupConfig... groups) {
        return new ModelConfig(name, Optional.empty(), List.of(groups));
    }

    private static ModelGraph graph(String model, GraphWalk... walks) {
        return new ModelGraph(model, List.of(walks));
    }

    private static List<WorkerGraph> split(ModelConfig model, ModelGraph graph) {
        return WorkerGraphSplit.split(List.of(model), Map.of(model.name(), graph));
    }

    @Test
    void everythingOnOneGroupGivesOneWorkerGraphPerWalkHoldingTheWalkUnchanged() {
        Sequential prefill = seq(node("enc", List.of(), edge("h", "llm")), node("llm", List.of("h")));
        Loop decode = loop("gen", 16, node("llm", List.of()));
        ModelGraph g = graph("m", new GraphWalk("prefill", prefill), new GraphWalk("decode", decode));

        List<WorkerGraph> wgs = split(model("m", group("enc", "llm")), g);

        assertThat(wgs).extracting(WorkerGraph::id).containsExactly(0, 1);
        assertThat(wgs).extracting(WorkerGraph::walk).containsExactly("prefill", "decode");
        assertThat(wgs.get(0).piece()).isEqualTo(prefill);
        assertThat(wgs.get(1).piece()).isEqualTo(decode);
        assertThat(wgs.get(0).nodeNames()).containsExactly("enc", "llm");
    }

    @Test
    void sequentialAcrossTwoGroupsSplitsAndMergesAdjacentSameGroupPieces() {
        GraphNode a = node("a", List.of(), edge("x", "b"));
        GraphNode b = node("b", List.of("x"), edge("y", "c"));
        GraphNode c = node("c", List.of("y"));
        ModelGraph g = graph("m", new GraphWalk("w", seq(a, b, c)));

        List<WorkerGraph> wgs = split(model("m", group("a", "b"), group("c")), g);

        assertThat(wgs).hasSize(2);
        assertThat(wgs.get(0).nodeGroupIndex()).isEqualTo(0);
        assertThat(wgs.get(0).piece()).isEqualTo(seq(a, b));
        assertThat(wgs.get(1).nodeGroupIndex()).isEqualTo(1);
        assertThat(wgs.get(1).piece()).isEqualTo(c);
    }

    @Test
    void sequentialGoingBackToAGroupGivesASeparatePiece() {
        ModelGraph g = graph("m", new GraphWalk("w", seq(node("a", List.of()), node("b", List.of()), node("c", List.of()))));

        List<WorkerGraph> wgs = split(model("m", group("a", "c"), group("b")), g);

        assertThat(wgs).extracting(WorkerGraph::nodeGroupIndex).containsExactly(0, 1, 0);
    }

    @Test
    void parallelBranchesOnOneGroupMergeIntoOnePiece() {
        Parallel p = par(node("a", List.of()), node("b", List.of()));
        ModelGraph g = graph("m", new GraphWalk("w", seq(node("s", List.of()), p)));

        List<WorkerGraph> wgs = split(model("m", group("s"), group("a", "b")), g);

        assertThat(wgs).hasSize(2);
        assertThat(wgs.get(1).piece()).isEqualTo(p);
        assertThat(wgs.get(1).nodeNames()).containsExactly("a", "b");
    }

    @Test
    void parallelBranchesOnTwoGroupsGiveTwoPiecesSameGroupBranchesMerged() {
        GraphNode a = node("a", List.of());
        GraphNode b = node("b", List.of());
        GraphNode c = node("c", List.of());
        ModelGraph g = graph("m", new GraphWalk("w", par(a, b, c)));

        List<WorkerGraph> wgs = split(model("m", group("a", "c"), group("b")), g);

        assertThat(wgs).hasSize(2);
        assertThat(wgs.get(0).piece()).isEqualTo(par(a, c));
        assertThat(wgs.get(1).piece()).isEqualTo(b);
    }

    @Test
    void loopAcrossTwoGroupsBecomesTwoLoopsWithSameNameBoundsAndOutputs() {
        GraphNode llm = node("llm", List.of("audio"), edge("tok", "codec"));
        GraphNode codec = node("codec", List.of("tok"), edge("audio", "llm"));
        Loop gen = new Loop(seq(llm, codec), 32, List.of(edge("done", "")), List.of(edge("wav", "emit_to_client")), "gen");
        ModelGraph g = graph("m", new GraphWalk("decode", gen));

        List<WorkerGraph> wgs = split(model("m", group("llm"), group("codec")), g);

        assertThat(wgs).hasSize(2);
        assertThat(wgs.get(0).piece()).isEqualTo(new Loop(llm, 32, gen.outputs(), gen.accumulatedOutputs(), "gen"));
        assertThat(wgs.get(1).piece()).isEqualTo(new Loop(codec, 32, gen.outputs(), gen.accumulatedOutputs(), "gen"));
    }

    @Test
    void splitLoopPieceMergesWithAdjacentSameGroupSection() {
        GraphNode pre = node("pre", List.of());
        GraphNode llm = node("llm", List.of());
        GraphNode codec = node("codec", List.of());
        ModelGraph g = graph("m", new GraphWalk("w", seq(pre, loop("gen", 4, seq(llm, codec)))));

        List<WorkerGraph> wgs = split(model("m", group("pre", "llm"), group("codec")), g);

        assertThat(wgs).hasSize(2);
        assertThat(wgs.get(0).piece()).isEqualTo(seq(pre, loop("gen", 4, llm)));
    }

    private static final ModelConfig TTS = model("tts", group("llm"), group("codec"));
    private static final ModelGraph TTS_GRAPH = graph("tts",
            new GraphWalk("prefill", node("llm", List.of())),
            new GraphWalk("decode", seq(node("llm", List.of()), node("codec", List.of()))));
    private static final ModelConfig EMBED = model("embed", group("enc"));
    private static final ModelGraph EMBED_GRAPH = graph("embed", new GraphWalk("encode", node("enc", List.of())));

    @Test
    void idsContinueAcrossModelsInConfigOrder() {
        List<WorkerGraph> wgs = WorkerGraphSplit.split(List.of(TTS, EMBED), Map.of("tts", TTS_GRAPH, "embed", EMBED_GRAPH));

        assertThat(wgs).extracting(WorkerGraph::id).containsExactly(0, 1, 2, 3);
        assertThat(wgs).extracting(WorkerGraph::model).containsExactly("tts", "tts", "tts", "embed");
        assertThat(wgs).extracting(WorkerGraph::walk).containsExactly("prefill", "decode", "decode", "encode");
    }

    @Test
    void idsAreIdenticalAcrossIndependentComputationsAndMapOrders() {
        Map<String, ModelGraph> ordered = new LinkedHashMap<>();
        ordered.put("tts", TTS_GRAPH);
        ordered.put("embed", EMBED_GRAPH);
        Map<String, ModelGraph> reversed = new TreeMap<>(Map.of("tts", TTS_GRAPH, "embed", EMBED_GRAPH));
        Map<String, ModelGraph> hashed = new HashMap<>(ordered);

        List<WorkerGraph> first = WorkerGraphSplit.split(List.of(TTS, EMBED), ordered);
        List<WorkerGraph> second = WorkerGraphSplit.split(List.of(TTS, EMBED), reversed);
        List<WorkerGraph> third = WorkerGraphSplit.split(List.of(TTS, EMBED), hashed);

        assertThat(second).isEqualTo(first);
        assertThat(third).isEqualTo(first);
        assertThat(first.get(3).model()).isEqualTo("embed");
    }

    @Test
    void reorderingModelsInTheConfigReordersIds() {
        List<WorkerGraph> wgs = WorkerGraphSplit.split(List.of(EMBED, TTS), Map.of("tts", TTS_GRAPH, "embed", EMBED_GRAPH));

        assertThat(wgs.get(0).model()).isEqualTo("embed");
        assertThat(wgs.get(0).id()).isZero();
    }

    @Test
    void graphWalksFilterPlacesTheSameNodeOnDifferentGroupsPerWalk() {
        ModelGraph g = graph("m", new GraphWalk("prefill", node("llm", List.of())), new GraphWalk("decode", node("llm", List.of())));

        List<WorkerGraph> wgs = split(model("m", group(List.of("llm"), List.of("prefill")), group(List.of("llm"), List.of("decode"))), g);

        assertThat(wgs).extracting(WorkerGraph::nodeGroupIndex).containsExactly(0, 1);
    }

    @Test
    void nodeInNoGroupIsAnErrorNamingIt() {
        ModelGraph g = graph("m", new GraphWalk("w", seq(node("a", List.of()), node("orphan", List.of()))));

        GraphModelException e = catchThrowableOfType(() -> split(model("m", group("a")), g), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("node 'orphan'");
        assertThat(e.getMessage()).contains("no node group");
    }

    @Test
    void nodeWhoseOnlyGroupFiltersTheWalkOutIsAnErrorNamingNodeAndGroup() {
        ModelGraph g = graph("m", new GraphWalk("decode", node("llm", List.of())));

        GraphModelException e = catchThrowableOfType(
                () -> split(model("m", group(List.of("llm"), List.of("prefill"))), g), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("node 'llm'");
        assertThat(e.getMessage()).contains("[0]").contains("graph_walks").contains("decode");
    }

    @Test
    void nodeOnTwoGroupsForOneWalkIsAnError() {
        ModelGraph g = graph("m", new GraphWalk("w", node("llm", List.of())));

        GraphModelException e = catchThrowableOfType(() -> split(model("m", group("llm"), group("llm")), g), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("node 'llm'");
        assertThat(e.getMessage()).contains("[0, 1]");
    }

    @Test
    void modelWithoutGraphIsAnErrorNamingIt() {
        GraphModelException e = catchThrowableOfType(
                () -> WorkerGraphSplit.split(List.of(TTS, EMBED), Map.of("tts", TTS_GRAPH)), GraphModelException.class);

        assertThat(e.subject()).isEqualTo("model 'embed'");
    }

    @Test
    void nestedLoopAcrossGroupsSplitsBothLoopsKeepingNames() {
        GraphNode a = node("a", List.of());
        GraphNode b = node("b", List.of());
        GraphNode c = node("c", List.of());
        ModelGraph g = graph("m", new GraphWalk("w", loop("outer", 3, seq(a, loop("inner", 5, seq(b, c))))));

        List<WorkerGraph> wgs = split(model("m", group("a", "b"), group("c")), g);

        assertThat(wgs).hasSize(2);
        assertThat(wgs.get(0).piece()).isEqualTo(loop("outer", 3, seq(a, loop("inner", 5, b))));
        assertThat(wgs.get(1).piece()).isEqualTo(loop("outer", 3, loop("inner", 5, c)));
    }

    @Test
    void splitsAParsedDeploymentConfig() {
        DeploymentConfig config = DeploymentConfig.parse("""
                models:
                  - name: toy-tts
                    node_groups:
                      - node_names: [llm]
                        workers: [0]
                        graph_walks: [prefill, decode]
                      - node_names: [codec]
                        workers: [1]
                  - name: minilm-embed
                    node_groups:
                      - node_names: [encoder]
                        workers: [0, 1]
                """, "test");
        ModelGraph tts = graph("toy-tts", new GraphWalk("prefill", node("llm", List.of())),
                new GraphWalk("decode", loop("gen", 8, seq(node("llm", List.of()), node("codec", List.of())))));
        ModelGraph embed = graph("minilm-embed", new GraphWalk("embed", node("encoder", List.of())));

        List<WorkerGraph> wgs = WorkerGraphSplit.split(config, Map.of("minilm-embed", embed, "toy-tts", tts));

        assertThat(wgs).extracting(w -> w.id() + ":" + w.model() + "/" + w.walk() + "@" + w.nodeGroupIndex() + w.nodeNames())
                .containsExactly("0:toy-tts/prefill@0[llm]", "1:toy-tts/decode@0[llm]", "2:toy-tts/decode@1[codec]",
                        "3:minilm-embed/embed@0[encoder]");
    }

}
