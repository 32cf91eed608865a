package io.mstar.deployment;

import java.util.List;
import java.util.Optional;

/**
 * One model served by the deployment ({@code models[]} in the YAML).
 *
 * @param name the catalog name requests use
 * @param kvCache KV-cache sizing, absent for models without autoregressive nodes
 * @param nodeGroups where the model's nodes run, never empty
 * @param onnx the model's graph as ONNX files when it is not a built-in model
 */
public record ModelConfig(String name, Optional<KvCacheConfig> kvCache, List<NodeGroupConfig> nodeGroups,
        Optional<OnnxModelConfig> onnx) {

    public ModelConfig {
        nodeGroups = List.copyOf(nodeGroups);
    }

    /** A built-in model's entry (its graph comes from the catalog). */
    public ModelConfig(String name, Optional<KvCacheConfig> kvCache, List<NodeGroupConfig> nodeGroups) {
        this(name, kvCache, nodeGroups, Optional.empty());
    }
}
