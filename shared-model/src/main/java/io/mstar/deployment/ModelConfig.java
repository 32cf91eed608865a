package io.mstar.deployment;

import java.util.List;
import java.util.Optional;

/**
 * One model served by the deployment ({@code models[]} in the YAML).
 *
 * @param name the catalog name requests use
 * @param kvCache KV-cache sizing, absent for models without autoregressive nodes
 * @param nodeGroups where the model's nodes run, never empty
 */
public record ModelConfig(String name, Optional<KvCacheConfig> kvCache, List<NodeGroupConfig> nodeGroups) {

    public ModelConfig {
        nodeGroups = List.copyOf(nodeGroups);
    }
}
