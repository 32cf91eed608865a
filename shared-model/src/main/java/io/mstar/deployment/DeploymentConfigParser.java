package io.mstar.deployment;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Walks the YAML tree by hand rather than binding it, so every error names the exact key path, unknown keys
 * are rejected (a misspelt {@code tp_szie} must not silently mean 1), and defaults live in one place.
 */
final class DeploymentConfigParser {

    private static final YAMLMapper YAML = YAMLMapper.builder().build();
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

    private final String source;
    /** Where relative ONNX file names resolve: the deployment file's folder; null for a resource or text. */
    private final Path baseDir;

    DeploymentConfigParser(String source, Path baseDir) {
        this.source = source;
        this.baseDir = baseDir;
    }

    DeploymentConfig parse(String yaml) {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (JacksonException e) {
            throw new DeploymentConfigException(source, "", "not valid YAML: " + e.getOriginalMessage(), e);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw fail("", "the document is empty");
        }
        requireObject(root, "");
        allowOnly(root, "", Set.of("max_concurrent_requests", "max_queued_requests", "request_timeout", "models"));
        int maxConcurrent = optionalInt(root, "", "max_concurrent_requests",
                DeploymentConfig.DEFAULT_MAX_CONCURRENT_REQUESTS, 1);
        int maxQueued = optionalInt(root, "", "max_queued_requests", DeploymentConfig.DEFAULT_MAX_QUEUED_REQUESTS, 0);
        Duration timeout = optionalDuration(root, "request_timeout", DeploymentConfig.DEFAULT_REQUEST_TIMEOUT);
        JsonNode models = requireNonEmptyArray(root, "", "models");
        List<ModelConfig> parsed = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < models.size(); i++) {
            String path = "models[" + i + "]";
            ModelConfig model = parseModel(models.get(i), path);
            if (!names.add(model.name())) {
                throw fail(path + ".name", "duplicate model name '" + model.name() + "'");
            }
            parsed.add(model);
        }
        return new DeploymentConfig(maxConcurrent, maxQueued, timeout, parsed);
    }

    private ModelConfig parseModel(JsonNode node, String path) {
        requireObject(node, path);
        allowOnly(node, path, Set.of("name", "kv_cache", "node_groups", "onnx"));
        String name = requireString(node, path, "name");
        Optional<KvCacheConfig> kvCache = Optional.empty();
        JsonNode kv = node.get("kv_cache");
        if (kv != null && !kv.isNull()) {
            String kvPath = path + ".kv_cache";
            requireObject(kv, kvPath);
            allowOnly(kv, kvPath, Set.of("page_size", "max_num_pages"));
            kvCache = Optional.of(new KvCacheConfig(requireInt(kv, kvPath, "page_size", 1),
                    requireInt(kv, kvPath, "max_num_pages", 1)));
        }
        JsonNode groups = requireNonEmptyArray(node, path, "node_groups");
        List<NodeGroupConfig> parsed = new ArrayList<>();
        Set<String> nodesSeen = new HashSet<>();
        for (int i = 0; i < groups.size(); i++) {
            String groupPath = path + ".node_groups[" + i + "]";
            NodeGroupConfig group = parseGroup(groups.get(i), groupPath);
            for (String nodeName : group.nodeNames()) {
                if (!nodesSeen.add(nodeName)) {
                    throw fail(groupPath + ".node_names", "node '" + nodeName + "' is already placed by another group");
                }
            }
            parsed.add(group);
        }
        Optional<OnnxModelConfig> onnx = Optional.empty();
        JsonNode onnxNode = node.get("onnx");
        if (onnxNode != null && !onnxNode.isNull()) {
            onnx = Optional.of(parseOnnx(onnxNode, path + ".onnx"));
        }
        return new ModelConfig(name, kvCache, parsed, onnx);
    }

    private OnnxModelConfig parseOnnx(JsonNode node, String path) {
        requireObject(node, path);
        allowOnly(node, path, Set.of("inputs", "outputs", "nodes"));
        Map<String, String> inputs = stringMap(node, path, "inputs");
        List<String> outputs = stringList(requireNonEmptyArray(node, path, "outputs"), path + ".outputs");
        JsonNode nodes = requireNonEmptyArray(node, path, "nodes");
        List<OnnxNodeConfig> parsed = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            parsed.add(parseOnnxNode(nodes.get(i), path + ".nodes[" + i + "]"));
        }
        checkSignals(inputs, outputs, parsed, path);
        return new OnnxModelConfig(inputs, outputs, parsed);
    }

    /**
     * Every node input is a request input or an earlier node's output; every signal has one producer; every node
     * output goes to a later node or to the client; every model output is produced.
     */
    private void checkSignals(Map<String, String> inputs, List<String> outputs, List<OnnxNodeConfig> nodes,
            String path) {
        Set<String> available = new HashSet<>(inputs.keySet());
        Set<String> nodeNames = new HashSet<>();
        for (int i = 0; i < nodes.size(); i++) {
            OnnxNodeConfig node = nodes.get(i);
            String nodePath = path + ".nodes[" + i + "]";
            if (!nodeNames.add(node.name())) {
                throw fail(nodePath + ".name", "node '" + node.name() + "' is listed twice");
            }
            for (String signal : node.inputs().keySet()) {
                if (!available.contains(signal)) {
                    throw fail(nodePath + ".inputs." + signal, "is neither a request input " + inputs.keySet()
                            + " nor an output of an earlier node");
                }
            }
            for (String signal : node.outputs().values()) {
                if (!available.add(signal)) {
                    throw fail(nodePath + ".outputs", "signal '" + signal + "' is produced twice (or is a request "
                            + "input)");
                }
                boolean consumed = outputs.contains(signal) || nodes.subList(i + 1, nodes.size()).stream()
                        .anyMatch(later -> later.inputs().containsKey(signal));
                if (!consumed) {
                    throw fail(nodePath + ".outputs", "signal '" + signal + "' goes nowhere: no later node takes it "
                            + "and it is not in outputs");
                }
            }
        }
        for (int i = 0; i < outputs.size(); i++) {
            if (!available.contains(outputs.get(i)) || inputs.containsKey(outputs.get(i))) {
                throw fail(path + ".outputs[" + i + "]", "'" + outputs.get(i) + "' is no node's output");
            }
        }
    }

    private OnnxNodeConfig parseOnnxNode(JsonNode node, String path) {
        requireObject(node, path);
        allowOnly(node, path, Set.of("name", "file", "inputs", "outputs", "batching", "pad_axes", "mask", "threads"));
        String name = requireString(node, path, "name");
        String file = requireString(node, path, "file");
        if (!file.startsWith("classpath:") && baseDir != null && !Path.of(file).isAbsolute()) {
            file = baseDir.resolve(file).normalize().toString();
        }
        Map<String, String> inputs = stringMap(node, path, "inputs");
        Map<String, String> outputs = stringMap(node, path, "outputs");
        String batching = OnnxNodeConfig.PER_REQUEST;
        if (node.get("batching") != null && !node.get("batching").isNull()) {
            batching = requireString(node, path, "batching");
            if (!batching.equals(OnnxNodeConfig.PER_REQUEST) && !batching.equals(OnnxNodeConfig.PAD)) {
                throw fail(path + ".batching", "must be " + OnnxNodeConfig.PER_REQUEST + " or " + OnnxNodeConfig.PAD
                        + ", was '" + batching + "'");
            }
        }
        List<String> padAxes = List.of();
        if (node.get("pad_axes") != null && !node.get("pad_axes").isNull()) {
            padAxes = stringList(requireNonEmptyArray(node, path, "pad_axes"), path + ".pad_axes");
        }
        Optional<String> mask = node.get("mask") == null || node.get("mask").isNull() ? Optional.empty()
                : Optional.of(requireString(node, path, "mask"));
        if (batching.equals(OnnxNodeConfig.PER_REQUEST) && (!padAxes.isEmpty() || mask.isPresent())) {
            throw fail(path + (padAxes.isEmpty() ? ".mask" : ".pad_axes"), "is for batching: pad; per_request pads "
                    + "nothing");
        }
        if (batching.equals(OnnxNodeConfig.PAD) && padAxes.isEmpty()) {
            throw fail(path + ".pad_axes", "is required with batching: pad (the graph's axis names that vary per "
                    + "request)");
        }
        Optional<Integer> threads = node.get("threads") == null || node.get("threads").isNull() ? Optional.empty()
                : Optional.of(requireInt(node, path, "threads", 1));
        return new OnnxNodeConfig(name, file, inputs, outputs, batching, padAxes, mask, threads);
    }

    /** A non-empty mapping of non-blank names to non-blank names, in declared order. */
    private Map<String, String> stringMap(JsonNode parent, String path, String key) {
        JsonNode node = parent.get(key);
        String keyPath = join(path, key);
        if (node == null || node.isNull()) {
            throw fail(keyPath, "is required");
        }
        if (!node.isObject() || node.isEmpty()) {
            throw fail(keyPath, "must be a non-empty mapping of names");
        }
        Map<String, String> values = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> entry : node.properties()) {
            if (entry.getKey().isBlank() || !entry.getValue().isString() || entry.getValue().stringValue().isBlank()) {
                throw fail(join(keyPath, entry.getKey()), "must map a name to a non-empty string");
            }
            values.put(entry.getKey(), entry.getValue().stringValue());
        }
        return values;
    }

    private NodeGroupConfig parseGroup(JsonNode node, String path) {
        requireObject(node, path);
        allowOnly(node, path, Set.of("node_names", "workers", "tp_size", "graph_walks"));
        List<String> nodeNames = stringList(requireNonEmptyArray(node, path, "node_names"), path + ".node_names");
        JsonNode workersNode = requireNonEmptyArray(node, path, "workers");
        List<Integer> workers = new ArrayList<>();
        for (int i = 0; i < workersNode.size(); i++) {
            String workerPath = path + ".workers[" + i + "]";
            int ordinal = intValue(workersNode.get(i), workerPath, 0);
            if (workers.contains(ordinal)) {
                throw fail(workerPath, "worker " + ordinal + " is listed twice");
            }
            workers.add(ordinal);
        }
        int tpSize = optionalInt(node, path, "tp_size", DeploymentConfig.DEFAULT_TP_SIZE, 1);
        if (workers.size() % tpSize != 0) {
            throw fail(path + ".workers", workers.size() + " workers do not split into instances of tp_size " + tpSize);
        }
        List<String> walks = List.of();
        JsonNode walksNode = node.get("graph_walks");
        if (walksNode != null && !walksNode.isNull()) {
            walks = stringList(requireNonEmptyArray(node, path, "graph_walks"), path + ".graph_walks");
        }
        return new NodeGroupConfig(nodeNames, workers, tpSize, walks);
    }

    private List<String> stringList(JsonNode array, String path) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            JsonNode item = array.get(i);
            String itemPath = path + "[" + i + "]";
            if (!item.isString() || item.stringValue().isBlank()) {
                throw fail(itemPath, "must be a non-empty string");
            }
            if (values.contains(item.stringValue())) {
                throw fail(itemPath, "'" + item.stringValue() + "' is listed twice");
            }
            values.add(item.stringValue());
        }
        return values;
    }

    private void requireObject(JsonNode node, String path) {
        if (!node.isObject()) {
            throw fail(path, "must be a mapping");
        }
    }

    private void allowOnly(JsonNode node, String path, Set<String> allowed) {
        for (Map.Entry<String, JsonNode> entry : node.properties()) {
            if (!allowed.contains(entry.getKey())) {
                throw fail(join(path, entry.getKey()), "unknown key (allowed: " + new java.util.TreeSet<>(allowed) + ")");
            }
        }
    }

    private JsonNode requireNonEmptyArray(JsonNode parent, String path, String key) {
        JsonNode node = parent.get(key);
        String keyPath = join(path, key);
        if (node == null || node.isNull()) {
            throw fail(keyPath, "is required");
        }
        if (!node.isArray()) {
            throw fail(keyPath, "must be a list");
        }
        if (node.isEmpty()) {
            throw fail(keyPath, "must not be empty");
        }
        return node;
    }

    private String requireString(JsonNode parent, String path, String key) {
        JsonNode node = parent.get(key);
        String keyPath = join(path, key);
        if (node == null || node.isNull()) {
            throw fail(keyPath, "is required");
        }
        if (!node.isString() || node.stringValue().isBlank()) {
            throw fail(keyPath, "must be a non-empty string");
        }
        return node.stringValue();
    }

    private int requireInt(JsonNode parent, String path, String key, int min) {
        JsonNode node = parent.get(key);
        if (node == null || node.isNull()) {
            throw fail(join(path, key), "is required");
        }
        return intValue(node, join(path, key), min);
    }

    private int optionalInt(JsonNode parent, String path, String key, int defaultValue, int min) {
        JsonNode node = parent.get(key);
        return node == null || node.isNull() ? defaultValue : intValue(node, join(path, key), min);
    }

    private int intValue(JsonNode node, String path, int min) {
        if (!node.isIntegralNumber() || !node.canConvertToInt()) {
            throw fail(path, "must be an integer");
        }
        int value = node.intValue();
        if (value < min) {
            throw fail(path, "must be at least " + min + ", was " + value);
        }
        return value;
    }

    private Duration optionalDuration(JsonNode parent, String key, Duration defaultValue) {
        JsonNode node = parent.get(key);
        if (node == null || node.isNull()) {
            return defaultValue;
        }
        Duration value;
        if (node.isIntegralNumber() && node.canConvertToLong()) {
            value = Duration.ofSeconds(node.longValue());
        } else if (node.isString()) {
            Matcher m = DURATION.matcher(node.stringValue().trim());
            if (!m.matches()) {
                throw fail(key, "must be a duration such as 600s, 10m, 1h or 500ms, was '" + node.stringValue() + "'");
            }
            long amount = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            value = switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofSeconds(amount);
            };
        } else {
            throw fail(key, "must be a duration such as 600s");
        }
        if (value.isZero()) {
            throw fail(key, "must be positive");
        }
        return value;
    }

    private static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private DeploymentConfigException fail(String key, String problem) {
        return new DeploymentConfigException(source, key, problem);
    }
}
