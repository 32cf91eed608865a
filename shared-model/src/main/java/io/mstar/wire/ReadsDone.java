package io.mstar.wire;

import java.util.Objects;

/**
 * An entity confirming it has no in-flight reads for a request and will start none: the
 * conductor's gate before it sends the hard {@link RemoveRequest}.
 *
 * @param requestId the request
 * @param entityId  the entity that is done reading ({@code worker-<n>})
 */
public record ReadsDone(String requestId, String entityId) implements ConductorMessageBody, RequestScoped {

    public ReadsDone {
        Objects.requireNonNull(requestId, "request_id");
        Objects.requireNonNull(entityId, "entity_id");
    }
}
