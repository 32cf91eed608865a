package io.mstar.model;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.graph.GraphModelException;
import io.mstar.graph.ModelGraph;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The graphs of the models this build knows, by catalog name. Conductor and workers look graphs
 * up here so both split the same graph into the same worker graphs.
 */
public final class ModelGraphs {

    private static final Map<String, Supplier<ModelGraph>> BUILT_IN = Map.of(CounterModel.NAME, CounterModel::graph,
            ToyTtsModel.NAME, ToyTtsModel::graph,
            MiniLmModel.NAME, MiniLmModel::graph);

    private ModelGraphs() {
    }

    /** Names of every model in the catalog. */
    public static Set<String> names() {
        return BUILT_IN.keySet();
    }

    /** The graph of {@code model}; an unknown name is a {@link GraphModelException} naming it. */
    public static ModelGraph of(String model) {
        Supplier<ModelGraph> graph = BUILT_IN.get(model);
        if (graph == null) {
            throw new GraphModelException("model '" + model + "'", "is not in the catalog " + names());
        }
        return graph.get();
    }

    /**
     * The graphs of every model {@code config} serves, keyed by name, in its order: a built-in model's from the
     * catalog, a model made of ONNX files from its {@code onnx} section ({@link OnnxModels}).
     */
    public static Map<String, ModelGraph> of(DeploymentConfig config) {
        Map<String, ModelGraph> graphs = new LinkedHashMap<>();
        for (ModelConfig model : config.models()) {
            graphs.put(model.name(), model.onnx().map(onnx -> OnnxModels.graph(model.name(), onnx))
                    .orElseGet(() -> of(model.name())));
        }
        return graphs;
    }

    /** The graphs of {@code models}, keyed by name, in the order given. */
    public static Map<String, ModelGraph> of(Iterable<String> models) {
        Map<String, ModelGraph> graphs = new LinkedHashMap<>();
        for (String model : models) {
            graphs.put(model, of(model));
        }
        return graphs;
    }
}
