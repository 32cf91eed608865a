package io.mstar.conductor.model;

import java.util.List;
import java.util.Map;

import io.mstar.graph.ModelGraph;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.model.MiniLmModel;

/**
 * The policy of {@link MiniLmModel}: one {@code embed} pass with the client's {@code text} (non-empty UTF-8 bytes,
 * one sentence), then done. Nothing is persisted, so nothing is unpersisted; the outputs ({@code embedding},
 * {@code num_tokens}) reach the client as {@code ResultTensors}. Tokenization (and truncation at 256 word-pieces)
 * happens on the worker.
 */
public final class MiniLmPolicy implements ConductorPolicy {

    @Override
    public String model() {
        return MiniLmModel.NAME;
    }

    @Override
    public Map<String, String> inputDtypes() {
        return Map.of(MiniLmModel.TEXT, MiniLmModel.TEXT_DTYPE);
    }

    @Override
    public void validate(PolicyRequest request) {
        List<TensorPointerInfo> text = request.inputs().get(MiniLmModel.TEXT);
        if (text == null || text.size() != 1 || text.get(0).dims().size() != 1 || text.get(0).dims().get(0) < 1) {
            throw new ModelInputException(MiniLmModel.NAME + " needs one input 'text': a non-empty sentence");
        }
    }

    @Override
    public Step initial(String partition, PolicyRequest request) {
        if (!partition.equals(ModelGraph.DEFAULT_PARTITION)) {
            throw new PolicyException(MiniLmModel.NAME + " has no partition '" + partition + "'");
        }
        return new Step(MiniLmModel.EMBED, Map.of(MiniLmModel.TEXT, request.inputs().get(MiniLmModel.TEXT)), Map.of(),
                Map.of());
    }

    @Override
    public Transition next(PassResult result, PolicyRequest request) {
        return Transition.done(List.of());
    }
}
