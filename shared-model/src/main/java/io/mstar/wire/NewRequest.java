package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.request.CurrentForwardPassInfo;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The conductor announcing a request to a worker that runs part of it.
 *
 * @param requestId                the request
 * @param partitionWorkerGraphIds  worker graphs of the request's partition, in run order
 * @param workerGraphToWorkers     worker graph id to the workers running it (several under
 *                                 tensor parallelism); travels as sorted {@code [id, workers]} pairs
 * @param initialInputs            the first pass's input edges
 * @param requestInfo              the request's state for the first pass
 * @param inlineData               extension (docs/protocol.md#extensions): the bytes of every described tensor,
 *                                 base64, in the order of {@code initialInputs} and of each edge's descriptors;
 *                                 empty (the default, and then not written) when the worker reads them. The conductor
 *                                 inlines a token-sized prompt, so the worker's first pass starts without a read.
 */
public record NewRequest(
        String requestId,
        List<Integer> partitionWorkerGraphIds,
        Map<Integer, List<String>> workerGraphToWorkers,
        List<GraphEdge> initialInputs,
        CurrentForwardPassInfo requestInfo,
        List<String> inlineData) implements WorkerMessageBody, RequestScoped {

    public NewRequest {
        Objects.requireNonNull(requestId, "request_id");
        partitionWorkerGraphIds = Canonical.requiredList(partitionWorkerGraphIds, "partition_worker_graph_ids");
        workerGraphToWorkers = Canonical.listValues(workerGraphToWorkers, "worker_graph_to_workers", true);
        initialInputs = Canonical.requiredList(initialInputs, "initial_inputs");
        Objects.requireNonNull(requestInfo, "request_info");
        inlineData = Canonical.inlineData(inlineData, initialInputs);
    }

    /** A request whose initial inputs the worker reads through the tensor transport. */
    public NewRequest(String requestId, List<Integer> partitionWorkerGraphIds,
            Map<Integer, List<String>> workerGraphToWorkers, List<GraphEdge> initialInputs,
            CurrentForwardPassInfo requestInfo) {
        this(requestId, partitionWorkerGraphIds, workerGraphToWorkers, initialInputs, requestInfo, List.of());
    }

    /** Whether the initial inputs' bytes travel in this message. */
    public boolean inline() {
        return !inlineData.isEmpty();
    }
}
