package io.mstar.conductor.lifecycle;

import java.util.concurrent.CompletableFuture;

import io.mstar.messaging.EntityId;
import io.mstar.wire.WorkerMessageBody;

/**
 * Where the lifecycle sends worker messages. The service wires the Kafka {@code ControlPlaneSender}; tests
 * capture. Called on the loop; must not block (per-request order from this sender must hold, which Kafka keys by
 * request id give).
 */
@FunctionalInterface
public interface WorkerOutbox {

    /** Completes when the broker has the message, or exceptionally when it refused it; never throws. */
    CompletableFuture<?> send(EntityId worker, WorkerMessageBody body);
}
