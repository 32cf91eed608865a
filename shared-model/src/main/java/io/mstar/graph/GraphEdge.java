package io.mstar.graph;

import java.util.List;
import java.util.Objects;

/**
 * A routed signal: the tensors one node hands to the next (or to the client, or to the
 * conductor's persisted state).
 *
 * <p>Immutable; {@code tensorInfo} is copied. {@code targetPartition} and {@code shardDim} are
 * nullable.
 *
 * @param nextNode          a node name, {@code emit_to_client}, or empty for a persist-only edge
 * @param name              the signal name
 * @param tensorInfo        descriptors of the tensors carried; default empty
 * @param persist           kept at the conductor across forward passes; default false
 * @param conductorNewToken counted by the conductor toward the output-token total; default false
 * @param isStreaming       streaming edge: tokens accumulate in the destination's buffer
 * @param targetPartition   the partition a streaming edge feeds, nullable
 * @param outputModality    for {@code emit_to_client}: text, image, video or audio; default ""
 * @param persistForLoop    persisted only for the enclosing loop; default false
 * @param finalStreamChunk  set on a synthetic streaming-input edge carrying the final chunk, so
 *                          the consuming pass (not the earlier ingest) reports the partition done
 * @param totalFanin        shards this signal is split into under tensor parallelism; default 1
 * @param shardDim          dimension along which it is sharded, nullable
 */
public record GraphEdge(
        String nextNode,
        String name,
        List<TensorPointerInfo> tensorInfo,
        boolean persist,
        boolean conductorNewToken,
        boolean isStreaming,
        String targetPartition,
        String outputModality,
        boolean persistForLoop,
        boolean finalStreamChunk,
        int totalFanin,
        Integer shardDim) {

    /** Value of {@code next_node} for an edge whose tensors go back to the client. */
    public static final String EMIT_TO_CLIENT = "emit_to_client";

    public GraphEdge {
        Objects.requireNonNull(nextNode, "next_node");
        Objects.requireNonNull(name, "name");
        tensorInfo = tensorInfo == null ? List.of() : List.copyOf(tensorInfo);
        outputModality = outputModality == null ? "" : outputModality;
    }

    /** An edge with every optional field at its spec default. */
    public GraphEdge(String nextNode, String name, List<TensorPointerInfo> tensorInfo) {
        this(nextNode, name, tensorInfo, false, false, false, null, "", false, false, 1, null);
    }
}
