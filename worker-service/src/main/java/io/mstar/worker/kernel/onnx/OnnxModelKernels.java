package io.mstar.worker.kernel.onnx;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.deployment.OnnxNodeConfig;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeKernel;

/**
 * The kernels of a deployment's models made of ONNX files (docs/models.md#serve-your-own-onnx-model) that one worker
 * runs: an {@link OnnxNodeKernel} for each node placed on it, its session opened now, so that a file that is missing,
 * malformed or does not fit its mapping stops the worker's start-up with a message naming the model, the node and
 * the file, instead of failing requests later.
 */
public final class OnnxModelKernels {

    private OnnxModelKernels() {
    }

    public static List<ModelKernels> forWorker(DeploymentConfig config, int worker) {
        List<ModelKernels> models = new ArrayList<>();
        List<OnnxNodeKernel> opened = new ArrayList<>();
        try {
            for (ModelConfig model : config.models()) {
                if (model.onnx().isEmpty()) {
                    continue;
                }
                Set<String> placed = new HashSet<>();
                for (NodeGroupConfig group : model.nodeGroups()) {
                    if (group.workers().contains(worker)) {
                        placed.addAll(group.nodeNames());
                    }
                }
                Map<String, NodeKernel> kernels = new LinkedHashMap<>();
                for (OnnxNodeConfig node : model.onnx().get().nodes()) {
                    if (placed.contains(node.name())) {
                        OnnxNodeKernel kernel = load(model.name(), node);
                        opened.add(kernel);
                        kernels.put(node.name(), kernel);
                    }
                }
                if (!kernels.isEmpty()) {
                    models.add(new ModelKernels(model.name(), kernels));
                }
            }
        } catch (RuntimeException e) {
            // the kernels loaded before the failing one
            for (OnnxNodeKernel k : opened) {
                k.close();
            }
            throw e;
        }
        return models;
    }

    private static OnnxNodeKernel load(String model, OnnxNodeConfig node) {
        OnnxNodeSpec spec = new OnnxNodeSpec(node.file(), node.inputs(), node.outputs(), Map.of(),
                node.batching().equals(OnnxNodeConfig.PAD) ? OnnxNodeSpec.Batching.PAD
                        : OnnxNodeSpec.Batching.PER_REQUEST,
                Set.copyOf(node.padAxes()), node.mask().orElse(null),
                node.threads().orElse(Runtime.getRuntime().availableProcessors()));
        try {
            return new OnnxNodeKernel(spec);
        } catch (RuntimeException e) {
            throw new OnnxModelException("model '" + model + "', node '" + node.name() + "': " + e.getMessage(), e);
        }
    }

}
