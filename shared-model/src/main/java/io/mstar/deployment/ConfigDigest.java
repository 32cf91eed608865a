package io.mstar.deployment;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Hex SHA-256 of a deployment config's canonical form. Every Kafka record carries it
 * ({@code mstar-config} header) and a receiver with another digest dead-letters the record, so two processes
 * started from different configs never act on each other's messages.
 *
 * <p>The canonical form is compact JSON of the parsed config with defaults applied, keys sorted, the timeout
 * in milliseconds and lists in declared order (order is meaningful: worker order picks TP ranks). Comments,
 * key order, quoting and omitted defaults therefore do not change the digest; any value that does change
 * behaviour does.
 */
public record ConfigDigest(String hex) {

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();

    public ConfigDigest {
        if (hex == null || hex.isBlank()) {
            throw new IllegalArgumentException("config digest must not be blank");
        }
    }

    public static ConfigDigest of(DeploymentConfig config) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(canonicalForm(config).getBytes(StandardCharsets.UTF_8));
            return new ConfigDigest(HexFormat.of().formatHex(hash));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM provides SHA-256", e);
        }
    }

    /** The exact text that is hashed; exposed so a mismatch can be diagnosed by diffing two processes' forms. */
    public static String canonicalForm(DeploymentConfig config) {
        Map<String, Object> root = new TreeMap<>();
        root.put("max_concurrent_requests", config.maxConcurrentRequests());
        root.put("max_queued_requests", config.maxQueuedRequests());
        root.put("request_timeout_ms", config.requestTimeout().toMillis());
        List<Object> models = new ArrayList<>();
        for (ModelConfig model : config.models()) {
            Map<String, Object> m = new TreeMap<>();
            m.put("name", model.name());
            model.kvCache().ifPresent(kv -> m.put("kv_cache",
                    new TreeMap<>(Map.of("page_size", kv.pageSize(), "max_num_pages", kv.maxNumPages()))));
            List<Object> groups = new ArrayList<>();
            for (NodeGroupConfig group : model.nodeGroups()) {
                Map<String, Object> g = new TreeMap<>();
                g.put("node_names", group.nodeNames());
                g.put("workers", group.workers());
                g.put("tp_size", group.tpSize());
                g.put("graph_walks", group.graphWalks());
                groups.add(g);
            }
            m.put("node_groups", groups);
            model.onnx().ifPresent(onnx -> m.put("onnx", onnxForm(onnx)));
            models.add(m);
        }
        root.put("models", models);
        return JSON.writeValueAsString(root);
    }

    /** The ONNX section as written, with defaults applied; the files' bytes are not hashed (the conductor never reads them). */
    private static Map<String, Object> onnxForm(OnnxModelConfig onnx) {
        Map<String, Object> o = new TreeMap<>();
        o.put("inputs", new TreeMap<>(onnx.inputs()));
        o.put("outputs", onnx.outputs());
        List<Object> nodes = new ArrayList<>();
        for (OnnxNodeConfig n : onnx.nodes()) {
            Map<String, Object> m = new TreeMap<>();
            m.put("name", n.name());
            m.put("file", n.file());
            m.put("inputs", new TreeMap<>(n.inputs()));
            m.put("outputs", new TreeMap<>(n.outputs()));
            m.put("batching", n.batching());
            m.put("pad_axes", n.padAxes());
            n.mask().ifPresent(mask -> m.put("mask", mask));
            n.threads().ifPresent(t -> m.put("threads", t));
            nodes.add(m);
        }
        o.put("nodes", nodes);
        return o;
    }

    @Override
    public String toString() {
        return hex;
    }
}
