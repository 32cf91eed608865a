package io.mstar.deployment;

import java.util.List;
import java.util.Map;

/**
 * A model made of ONNX files ({@code models[].onnx}; docs/models.md#serve-your-own-onnx-model), served with the
 * stock single-pass policy: the request's inputs go in, the nodes run in the order listed, the outputs go to the
 * client.
 *
 * @param inputs  the request's inputs: signal to dtype ({@code float32}, {@code int64}, {@code int32}, ...)
 * @param outputs the signals that reach the client, in order
 * @param nodes   the nodes, in order: each consumes request inputs or earlier nodes' outputs
 */
public record OnnxModelConfig(Map<String, String> inputs, List<String> outputs, List<OnnxNodeConfig> nodes) {

    public OnnxModelConfig {
        inputs = Map.copyOf(inputs);
        outputs = List.copyOf(outputs);
        nodes = List.copyOf(nodes);
    }
}
