package io.mstar.wire;

import java.util.Map;
import java.util.Objects;

/**
 * The conductor releasing persisted tensors: each uuid's reference count drops by the given
 * amount.
 *
 * @param requestId       the request
 * @param uuidToRefCount  tensor uuid to references released; travels as sorted {@code [uuid, n]}
 *                        pairs
 */
public record UnpersistTensors(String requestId, Map<Long, Integer> uuidToRefCount)
        implements WorkerMessageBody, RequestScoped {

    public UnpersistTensors {
        Objects.requireNonNull(requestId, "request_id");
        uuidToRefCount = Canonical.requiredMap(uuidToRefCount, "uuid_to_ref_count");
    }
}
