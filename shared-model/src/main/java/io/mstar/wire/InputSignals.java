package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.request.CurrentForwardPassInfo;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Signals (edges with their tensor descriptors) delivered to a worker for a request's next
 * forward pass.
 *
 * @param requestId      the request
 * @param inputs         the edges delivered
 * @param requestInfo    the request's state for this pass
 * @param partitionName  the partition the inputs belong to; default {@code "default"}
 * @param producerDone   streaming producer partitions that have finished, so the consumer flushes
 *                       its stream buffer and marks the final chunk; a set, sorted on the wire
 * @param inlineData     extension (docs/protocol.md#extensions): the bytes of every described tensor, base64, in
 *                       the order of {@code inputs} and of each edge's descriptors; empty (the default, and then not
 *                       written) when the receiver reads them through the tensor transport. A producer inlines a
 *                       token-sized tensor and keeps no copy for the receiver, which neither reads nor acknowledges
 *                       it: one read and one acknowledgement fewer per streamed token.
 */
public record InputSignals(
        String requestId,
        List<GraphEdge> inputs,
        CurrentForwardPassInfo requestInfo,
        String partitionName,
        Set<String> producerDone,
        List<String> inlineData) implements WorkerMessageBody, RequestScoped {

    public InputSignals {
        Objects.requireNonNull(requestId, "request_id");
        inputs = Canonical.requiredList(inputs, "inputs");
        Objects.requireNonNull(requestInfo, "request_info");
        partitionName = partitionName == null ? CurrentForwardPassInfo.DEFAULT_PARTITION : partitionName;
        producerDone = Canonical.optionalSet(producerDone);
        inlineData = Canonical.inlineData(inlineData, inputs);
    }

    /** Signals whose tensors the receiver reads through the tensor transport. */
    public InputSignals(String requestId, List<GraphEdge> inputs, CurrentForwardPassInfo requestInfo,
            String partitionName, Set<String> producerDone) {
        this(requestId, inputs, requestInfo, partitionName, producerDone, List.of());
    }

    /** Inputs for the default partition, no producer done. */
    public InputSignals(String requestId, List<GraphEdge> inputs, CurrentForwardPassInfo requestInfo) {
        this(requestId, inputs, requestInfo, null, null);
    }

    /** Whether the tensors' bytes travel in this message. */
    public boolean inline() {
        return !inlineData.isEmpty();
    }
}
