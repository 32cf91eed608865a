package io.mstar.conductor.lifecycle;

import io.mstar.messaging.EntityId;
import io.mstar.wire.WorkerMessageBody;

/**
 * Where the lifecycle sends worker messages. The service wires the Kafka {@code ControlPlaneSender}; tests
 * capture. Called on the loop; must not block (per-request order from this sender must hold, which Kafka keys by
 * request id give).
 */
@FunctionalInterface
public interface WorkerOutbox {

    void send(EntityId worker, WorkerMessageBody body);
}
