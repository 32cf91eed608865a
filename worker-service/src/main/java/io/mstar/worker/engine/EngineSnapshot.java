package io.mstar.worker.engine;

import io.mstar.tensor.TensorStoreSnapshot;

/**
 * What the engine loop publishes for other threads (metrics, health, tests): an immutable value replaced each turn.
 *
 * @param requests          requests known here
 * @param queuedRequests    requests with a node ready and waiting for a batch
 * @param queuedNodes       ready (request, node) pairs waiting
 * @param parkedMessages    messages parked for requests not known yet
 * @param readsInFlight     tensor reads started and not landed
 * @param tombstones        removed requests remembered
 * @param tensors           the tensor store's state
 */
public record EngineSnapshot(int requests, int queuedRequests, int queuedNodes, int parkedMessages, int readsInFlight,
        int tombstones, TensorStoreSnapshot tensors) {

    public static final EngineSnapshot EMPTY = new EngineSnapshot(0, 0, 0, 0, 0, 0, TensorStoreSnapshot.EMPTY);
}
