package io.mstar.request;

import io.mstar.graph.NestedLoopIndices;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a worker and its engines need to know about a request at the current forward pass.
 *
 * <p>Immutable; maps are copied into sorted, unmodifiable maps that reject null keys and values.
 * On this wire {@code step_metadata} is string-valued: the reference system allows any JSON
 * value there, this runtime's engines only exchange strings through it.
 *
 * @param requestId              the wire request id
 * @param graphWalk              the walk being run
 * @param requiresCfg            classifier-free guidance: a conditional and an unconditional pass
 * @param fwdIndex               forward-pass counter of this request
 * @param randomSeed             seed for any randomness of this pass
 * @param maxTokens              output-token budget of the request
 * @param samplingConfig         node name to sampling config; default empty
 * @param stepMetadata           per-step engine hints, string-valued; default empty
 * @param resourcePublishInfo    resource name to what it has published; default empty
 * @param partitionName          the partition this pass belongs to; default {@code "default"}
 * @param loopStopTimes          loop name to when it was stopped; default empty
 * @param dynamicLoopIterCounts  loop name to iterations decided at run time; default empty
 */
public record CurrentForwardPassInfo(
        String requestId,
        String graphWalk,
        boolean requiresCfg,
        int fwdIndex,
        long randomSeed,
        int maxTokens,
        Map<String, MultiSamplingConfig> samplingConfig,
        Map<String, String> stepMetadata,
        Map<String, PublishedInfo> resourcePublishInfo,
        String partitionName,
        Map<String, NestedLoopIndices> loopStopTimes,
        Map<String, Integer> dynamicLoopIterCounts) {

    /** Partition name of a model with a single partition. */
    public static final String DEFAULT_PARTITION = "default";

    public CurrentForwardPassInfo {
        Objects.requireNonNull(requestId, "request_id");
        Objects.requireNonNull(graphWalk, "graph_walk");
        samplingConfig = sorted(samplingConfig, "sampling_config");
        stepMetadata = sorted(stepMetadata, "step_metadata");
        resourcePublishInfo = sorted(resourcePublishInfo, "resource_publish_info");
        partitionName = partitionName == null ? DEFAULT_PARTITION : partitionName;
        loopStopTimes = sorted(loopStopTimes, "loop_stop_times");
        dynamicLoopIterCounts = sorted(dynamicLoopIterCounts, "dynamic_loop_iter_counts");
    }

    /** Required fields only; everything else at its spec default. */
    public CurrentForwardPassInfo(String requestId, String graphWalk, boolean requiresCfg, int fwdIndex,
                                  long randomSeed, int maxTokens) {
        this(requestId, graphWalk, requiresCfg, fwdIndex, randomSeed, maxTokens,
                null, null, null, null, null, null);
    }

    private static <V> SortedMap<String, V> sorted(Map<String, V> map, String field) {
        if (map == null) {
            return Collections.emptySortedMap();
        }
        if (map.values().stream().anyMatch(java.util.Objects::isNull)) {
            throw new IllegalArgumentException(field + " has a null value");
        }
        return Collections.unmodifiableSortedMap(new TreeMap<>(map));
    }
}
