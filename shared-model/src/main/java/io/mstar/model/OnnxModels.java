package io.mstar.model;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.deployment.OnnxModelConfig;
import io.mstar.deployment.OnnxNodeConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphSection;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.Sequential;
import io.mstar.graph.SpecialDestinations;

/**
 * The graph of a model made of ONNX files (docs/models.md#serve-your-own-onnx-model): one walk, {@value #RUN}, of the
 * nodes in the order the deployment lists them. Each node output goes to every later node that takes it and, when
 * the model lists it as an output, to the client as modality {@value #MODALITY}. The deployment parser has already
 * checked that every signal has exactly one producer and somewhere to go.
 */
public final class OnnxModels {

    public static final String RUN = "run";
    /** What the client sees an ONNX model's outputs as: plain tensors, dtype and shape in each chunk's metadata. */
    public static final String MODALITY = "tensor";

    private OnnxModels() {
    }

    public static ModelGraph graph(String name, OnnxModelConfig config) {
        List<GraphSection> nodes = new ArrayList<>();
        List<OnnxNodeConfig> all = config.nodes();
        for (int i = 0; i < all.size(); i++) {
            OnnxNodeConfig node = all.get(i);
            List<GraphEdge> edges = new ArrayList<>();
            for (String signal : node.outputs().values()) {
                for (OnnxNodeConfig later : all.subList(i + 1, all.size())) {
                    if (later.inputs().containsKey(signal)) {
                        edges.add(new GraphEdge(later.name(), signal, List.of()));
                    }
                }
                if (config.outputs().contains(signal)) {
                    edges.add(GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, signal).outputModality(MODALITY)
                            .build());
                }
            }
            Set<String> inputs = new LinkedHashSet<>(node.inputs().keySet());
            nodes.add(new GraphNode(node.name(), inputs, edges, false));
        }
        GraphSection walk = nodes.size() == 1 ? nodes.get(0) : new Sequential(nodes);
        return new ModelGraph(name, List.of(new GraphWalk(RUN, walk)), Map.of(ModelGraph.DEFAULT_PARTITION,
                List.of(RUN)));
    }
}
