package io.mstar.wire;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.NodeAndGraphWalk;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.profile.GraphTiming;
import io.mstar.profile.RxInfo;
import io.mstar.profile.TxInfo;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.PublishedInfo;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A worker reporting that it finished its worker graphs of a request's forward pass: what it
 * persisted, how many tokens it produced, what it published, and how long it took.
 *
 * <p>Fourteen fields because the spec has fourteen; only the first three are required.
 * {@code graphTimings} travels as an array of {@link GraphTiming} objects, each naming its node
 * and walk; each key must equal its timing's {@link GraphTiming#key()}.
 *
 * @param requestId             the request
 * @param workerGraphIds        worker graphs completed
 * @param isFirstTpRank         sent by rank 0 of a tensor-parallel group (the one the conductor
 *                              counts)
 * @param persistSignals        signal name to descriptors of tensors kept for later passes
 * @param newTokenCounts        signal name to output tokens produced
 * @param outputSignalNames     signals emitted in this pass
 * @param resourcePublishInfo   resource name to what it published for the request
 * @param partitionName         the partition; default {@code "default"}
 * @param partitionDone         the pass consumed the final stream chunk; default false
 * @param streamTokensConsumed  streaming signal name to tokens the consumer got through
 * @param outputLoopIndices     signal name to the loop position that produced it
 * @param graphTimings          per (node, walk) timing
 * @param rxInfo                receive-side transfer totals
 * @param txInfo                send-side transfer totals
 */
public record WorkerGraphsDone(
        String requestId,
        List<Integer> workerGraphIds,
        boolean isFirstTpRank,
        Map<String, List<TensorPointerInfo>> persistSignals,
        Map<String, Integer> newTokenCounts,
        List<String> outputSignalNames,
        Map<String, PublishedInfo> resourcePublishInfo,
        String partitionName,
        boolean partitionDone,
        Map<String, Integer> streamTokensConsumed,
        Map<String, NestedLoopIndices> outputLoopIndices,
        Map<NodeAndGraphWalk, GraphTiming> graphTimings,
        List<RxInfo> rxInfo,
        List<TxInfo> txInfo) implements ConductorMessageBody, RequestScoped {

    public WorkerGraphsDone {
        Objects.requireNonNull(requestId, "request_id");
        workerGraphIds = Canonical.requiredList(workerGraphIds, "worker_graph_ids");
        persistSignals = Canonical.listValues(persistSignals, "persist_signals", false);
        newTokenCounts = Canonical.optionalMap(newTokenCounts, "new_token_counts");
        outputSignalNames = Canonical.optionalList(outputSignalNames);
        resourcePublishInfo = Canonical.optionalMap(resourcePublishInfo, "resource_publish_info");
        partitionName = partitionName == null ? CurrentForwardPassInfo.DEFAULT_PARTITION : partitionName;
        streamTokensConsumed = Canonical.optionalMap(streamTokensConsumed, "stream_tokens_consumed");
        outputLoopIndices = Canonical.optionalMap(outputLoopIndices, "output_loop_indices");
        graphTimings = Canonical.optionalMap(graphTimings, "graph_timings");
        for (Map.Entry<NodeAndGraphWalk, GraphTiming> e : graphTimings.entrySet()) {
            if (!e.getKey().equals(e.getValue().key())) {
                throw new IllegalArgumentException("graph_timings key " + e.getKey()
                        + " does not match its timing's node and walk " + e.getValue().key());
            }
        }
        rxInfo = Canonical.optionalList(rxInfo);
        txInfo = Canonical.optionalList(txInfo);
    }

    /** Required fields only; everything else at its spec default. */
    public WorkerGraphsDone(String requestId, List<Integer> workerGraphIds, boolean isFirstTpRank) {
        this(requestId, workerGraphIds, isFirstTpRank, null, null, null, null, null, false,
                null, null, null, null, null);
    }

    /** A builder starting from the required fields. */
    public static Builder builder(String requestId, List<Integer> workerGraphIds, boolean isFirstTpRank) {
        return new Builder(requestId, workerGraphIds, isFirstTpRank);
    }

    /** A builder holding this value's fields, to derive a changed copy. */
    public Builder toBuilder() {
        Builder b = new Builder(requestId, workerGraphIds, isFirstTpRank);
        b.persistSignals = persistSignals;
        b.newTokenCounts = newTokenCounts;
        b.outputSignalNames = outputSignalNames;
        b.resourcePublishInfo = resourcePublishInfo;
        b.partitionName = partitionName;
        b.partitionDone = partitionDone;
        b.streamTokensConsumed = streamTokensConsumed;
        b.outputLoopIndices = outputLoopIndices;
        b.graphTimings = graphTimings;
        b.rxInfo = rxInfo;
        b.txInfo = txInfo;
        return b;
    }

    /** Fluent construction; unset optional fields keep their spec defaults. Not thread-safe. */
    public static final class Builder {
        private final String requestId;
        private final List<Integer> workerGraphIds;
        private final boolean isFirstTpRank;
        private Map<String, List<TensorPointerInfo>> persistSignals;
        private Map<String, Integer> newTokenCounts;
        private List<String> outputSignalNames;
        private Map<String, PublishedInfo> resourcePublishInfo;
        private String partitionName;
        private boolean partitionDone;
        private Map<String, Integer> streamTokensConsumed;
        private Map<String, NestedLoopIndices> outputLoopIndices;
        private Map<NodeAndGraphWalk, GraphTiming> graphTimings;
        private List<RxInfo> rxInfo;
        private List<TxInfo> txInfo;

        private Builder(String requestId, List<Integer> workerGraphIds, boolean isFirstTpRank) {
            this.requestId = requestId;
            this.workerGraphIds = workerGraphIds;
            this.isFirstTpRank = isFirstTpRank;
        }

        public Builder persistSignals(Map<String, List<TensorPointerInfo>> persistSignals) {
            this.persistSignals = persistSignals;
            return this;
        }

        public Builder newTokenCounts(Map<String, Integer> newTokenCounts) {
            this.newTokenCounts = newTokenCounts;
            return this;
        }

        public Builder outputSignalNames(List<String> outputSignalNames) {
            this.outputSignalNames = outputSignalNames;
            return this;
        }

        public Builder resourcePublishInfo(Map<String, PublishedInfo> resourcePublishInfo) {
            this.resourcePublishInfo = resourcePublishInfo;
            return this;
        }

        public Builder partitionName(String partitionName) {
            this.partitionName = partitionName;
            return this;
        }

        public Builder partitionDone(boolean partitionDone) {
            this.partitionDone = partitionDone;
            return this;
        }

        public Builder streamTokensConsumed(Map<String, Integer> streamTokensConsumed) {
            this.streamTokensConsumed = streamTokensConsumed;
            return this;
        }

        public Builder outputLoopIndices(Map<String, NestedLoopIndices> outputLoopIndices) {
            this.outputLoopIndices = outputLoopIndices;
            return this;
        }

        public Builder graphTimings(Map<NodeAndGraphWalk, GraphTiming> graphTimings) {
            this.graphTimings = graphTimings;
            return this;
        }

        public Builder rxInfo(List<RxInfo> rxInfo) {
            this.rxInfo = rxInfo;
            return this;
        }

        public Builder txInfo(List<TxInfo> txInfo) {
            this.txInfo = txInfo;
            return this;
        }

        public WorkerGraphsDone build() {
            return new WorkerGraphsDone(requestId, workerGraphIds, isFirstTpRank, persistSignals, newTokenCounts, outputSignalNames, resourcePublishInfo, partitionName, partitionDone, streamTokensConsumed, outputLoopIndices, graphTimings, rxInfo, txInfo);
        }
    }
}
