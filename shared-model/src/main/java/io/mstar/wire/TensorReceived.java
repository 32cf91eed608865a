package io.mstar.wire;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A consumer acknowledging tensors it fetched (or failed to fetch) from the producer, so the
 * producer can drop its references.
 *
 * @param requestId          the request
 * @param successfulTensors  tensor uuid to the number of reads completed; travels as sorted
 *                           {@code [uuid, count]} pairs
 * @param failedTensorIds    uuids whose fetch failed
 */
public record TensorReceived(String requestId, Map<Long, Integer> successfulTensors, List<Long> failedTensorIds)
        implements WorkerMessageBody, RequestScoped {

    public TensorReceived {
        Objects.requireNonNull(requestId, "request_id");
        successfulTensors = Canonical.requiredMap(successfulTensors, "successful_tensors");
        failedTensorIds = Canonical.requiredList(failedTensorIds, "failed_tensor_ids");
    }
}
