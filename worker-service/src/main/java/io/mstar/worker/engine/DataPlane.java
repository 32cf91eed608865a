package io.mstar.worker.engine;

import java.util.Objects;

import io.mstar.messaging.EntityId;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.transport.TensorPublisher;
import io.mstar.tensor.transport.TensorReader;

/**
 * The tensor side of one worker as the engine uses it. The engine does not close any of it: the store is emptied
 * on the loop at shutdown and whoever created the parts closes them (server, then arena, then device).
 *
 * @param self      this worker's entity, stamped on every descriptor it publishes
 * @param device    where kernels run and tensors live
 * @param store     the tensors; owned by the engine loop
 * @param publisher stages tensors for peers; must be the store's release
 * @param reader    reads peers' and the conductor's tensors
 * @param uuids     mints uuids for tensors made here (outputs and received copies)
 * @param sessionId {@code host:port} of this worker's tensor server, the descriptors' {@code source_session_id}
 */
public record DataPlane(EntityId self, Device device, TensorStore store, TensorPublisher publisher, TensorReader reader,
        TensorUuids uuids, String sessionId) {

    public DataPlane {
        Objects.requireNonNull(self, "self");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(publisher, "publisher");
        Objects.requireNonNull(reader, "reader");
        Objects.requireNonNull(uuids, "uuids");
        Objects.requireNonNull(sessionId, "sessionId");
    }
}
