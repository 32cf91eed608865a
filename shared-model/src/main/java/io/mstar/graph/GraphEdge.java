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

    /** A builder starting from the required fields. */
    public static Builder builder(String nextNode, String name) {
        return new Builder(nextNode, name);
    }

    /** A builder holding this value's fields, to derive a changed copy. */
    public Builder toBuilder() {
        Builder b = new Builder(nextNode, name);
        b.tensorInfo = tensorInfo;
        b.persist = persist;
        b.conductorNewToken = conductorNewToken;
        b.isStreaming = isStreaming;
        b.targetPartition = targetPartition;
        b.outputModality = outputModality;
        b.persistForLoop = persistForLoop;
        b.finalStreamChunk = finalStreamChunk;
        b.totalFanin = totalFanin;
        b.shardDim = shardDim;
        return b;
    }

    /** Fluent construction; unset optional fields keep their spec defaults. Not thread-safe. */
    public static final class Builder {
        private final String nextNode;
        private final String name;
        private List<TensorPointerInfo> tensorInfo;
        private boolean persist;
        private boolean conductorNewToken;
        private boolean isStreaming;
        private String targetPartition;
        private String outputModality = "";
        private boolean persistForLoop;
        private boolean finalStreamChunk;
        private int totalFanin = 1;
        private Integer shardDim;

        private Builder(String nextNode, String name) {
            this.nextNode = nextNode;
            this.name = name;
        }

        public Builder tensorInfo(List<TensorPointerInfo> tensorInfo) {
            this.tensorInfo = tensorInfo;
            return this;
        }

        public Builder persist(boolean persist) {
            this.persist = persist;
            return this;
        }

        public Builder conductorNewToken(boolean conductorNewToken) {
            this.conductorNewToken = conductorNewToken;
            return this;
        }

        public Builder isStreaming(boolean isStreaming) {
            this.isStreaming = isStreaming;
            return this;
        }

        public Builder targetPartition(String targetPartition) {
            this.targetPartition = targetPartition;
            return this;
        }

        public Builder outputModality(String outputModality) {
            this.outputModality = outputModality;
            return this;
        }

        public Builder persistForLoop(boolean persistForLoop) {
            this.persistForLoop = persistForLoop;
            return this;
        }

        public Builder finalStreamChunk(boolean finalStreamChunk) {
            this.finalStreamChunk = finalStreamChunk;
            return this;
        }

        public Builder totalFanin(int totalFanin) {
            this.totalFanin = totalFanin;
            return this;
        }

        public Builder shardDim(Integer shardDim) {
            this.shardDim = shardDim;
            return this;
        }

        public GraphEdge build() {
            return new GraphEdge(nextNode, name, tensorInfo, persist, conductorNewToken, isStreaming, targetPartition, outputModality, persistForLoop, finalStreamChunk, totalFanin, shardDim);
        }
    }
}
