package io.mstar.deployment;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One node of a model made of ONNX files ({@code onnx.nodes[]}; docs/models.md#serve-your-own-onnx-model): the
 * file it runs and how the node's signals map onto the file's graph inputs and outputs.
 *
 * @param name     the graph node's name, placed by a node group
 * @param file     the {@code .onnx} file, resolved against the deployment file's folder when relative; or
 *                 {@code classpath:} and a resource name
 * @param inputs   node input signal to the graph input it feeds, in the file's terms
 * @param outputs  graph output to the node output signal it becomes
 * @param batching {@code per_request} (default: one run per request) or {@code pad} (one run per batch, padded to the
 *                 longest along {@code padAxes})
 * @param padAxes  for {@code pad}: the graph's symbolic axis names that vary per request
 * @param mask     for {@code pad}: a graph input the worker builds, 1 at real positions and 0 at padding
 * @param threads  ONNX Runtime's threads within one run; empty: as many as the worker's processors
 */
public record OnnxNodeConfig(String name, String file, Map<String, String> inputs, Map<String, String> outputs,
        String batching, List<String> padAxes, Optional<String> mask, Optional<Integer> threads) {

    public static final String PER_REQUEST = "per_request";
    public static final String PAD = "pad";

    public OnnxNodeConfig {
        inputs = Map.copyOf(inputs);
        outputs = Map.copyOf(outputs);
        padAxes = List.copyOf(padAxes);
    }
}
