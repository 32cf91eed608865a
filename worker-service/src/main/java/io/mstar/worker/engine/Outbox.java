package io.mstar.worker.engine;

import java.util.concurrent.CompletableFuture;

import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WorkerMessage;

/**
 * Where the engine's control messages go: Kafka in the service ({@link KafkaOutbox}), a recorder in tests. Each
 * send completes when the broker acknowledged the record; the engine waits for those before it reports a pass done,
 * so that whatever the conductor sends in reaction lands after them (docs/request-flow.md).
 */
public interface Outbox {

    CompletableFuture<?> toConductor(ConductorMessage message);

    CompletableFuture<?> toWorker(EntityId worker, WorkerMessage message);
}
