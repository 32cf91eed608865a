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
 */
public record NewRequest(
        String requestId,
        List<Integer> partitionWorkerGraphIds,
        Map<Integer, List<String>> workerGraphToWorkers,
        List<GraphEdge> initialInputs,
        CurrentForwardPassInfo requestInfo) implements WorkerMessageBody, RequestScoped {

    public NewRequest {
        Objects.requireNonNull(requestId, "request_id");
        partitionWorkerGraphIds = Canonical.requiredList(partitionWorkerGraphIds, "partition_worker_graph_ids");
        workerGraphToWorkers = Canonical.listValues(workerGraphToWorkers, "worker_graph_to_workers", true);
        initialInputs = Canonical.requiredList(initialInputs, "initial_inputs");
        Objects.requireNonNull(requestInfo, "request_info");
    }
}
