package io.mstar.conductor.model;

import java.util.List;
import java.util.Map;

import io.mstar.graph.ModelGraph;

/**
 * The stock policy of a single-pass model (docs/models.md#decisions), such as one made of ONNX files:
 * one pass of {@code walk} with the client's inputs, then done. Nothing is persisted; the walk's outputs reach the
 * client as they are produced. Shapes are the model's business: a worker whose node cannot take an input fails the
 * request with the node's message.
 */
public final class SinglePassPolicy implements ConductorPolicy {

    private final String model;
    private final Map<String, String> inputDtypes;
    private final String walk;

    public SinglePassPolicy(String model, Map<String, String> inputDtypes, String walk) {
        this.model = model;
        this.inputDtypes = Map.copyOf(inputDtypes);
        this.walk = walk;
    }

    @Override
    public String model() {
        return model;
    }

    @Override
    public Map<String, String> inputDtypes() {
        return inputDtypes;
    }

    @Override
    public void validate(PolicyRequest request) {
        request.inputs().forEach((name, tensors) -> {
            if (tensors.size() != 1) {
                throw new ModelInputException(model + " takes one tensor per input; '" + name + "' has "
                        + tensors.size());
            }
        });
    }

    @Override
    public Step initial(String partition, PolicyRequest request) {
        if (!partition.equals(ModelGraph.DEFAULT_PARTITION)) {
            throw new PolicyException(model + " has no partition '" + partition + "'");
        }
        return new Step(walk, request.inputs(), Map.of(), Map.of());
    }

    @Override
    public Transition next(PassResult result, PolicyRequest request) {
        return Transition.done(List.of());
    }
}
