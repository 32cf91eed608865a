package io.mstar.worker.engine;

import java.util.concurrent.CompletableFuture;

import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WorkerMessage;

/** The service's outbox: the control-plane producer; it does not close the sender. */
public final class KafkaOutbox implements Outbox {

    private final ControlPlaneSender sender;

    public KafkaOutbox(ControlPlaneSender sender) {
        this.sender = sender;
    }

    @Override
    public CompletableFuture<?> toConductor(ConductorMessage message) {
        return sender.sendToConductor(message);
    }

    @Override
    public CompletableFuture<?> toWorker(EntityId worker, WorkerMessage message) {
        return sender.sendToWorker(worker, message);
    }
}
