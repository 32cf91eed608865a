package io.mstar.worker.messaging;

import java.time.Clock;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.MessageListener;

import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.Received;
import io.mstar.wire.CollectiveBootstrap;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.engine.EngineLoop;
import io.mstar.worker.tp.NcclBootstraps;

/**
 * The listener of {@code <prefix>.worker.worker-<n>}. Runs on the listener thread and only counts, times and
 * hands each decoded message to the engine loop, or an NCCL unique id to the tensor-parallel rank waiting for it
 * ({@link NcclBootstraps}); it touches no other worker state. Records that failed to decode
 * never reach it: the error handler dead-letters them.
 */
final class WorkerInbox implements MessageListener<String, WorkerMessage> {

    private final EngineLoop loop;
    private final NcclBootstraps bootstraps;
    private final ControlPlaneMeters meters;
    private final Clock clock = Clock.systemUTC();

    WorkerInbox(EngineLoop loop, NcclBootstraps bootstraps, ControlPlaneMeters meters) {
        this.loop = loop;
        this.bootstraps = bootstraps;
        this.meters = meters;
    }

    @Override
    public void onMessage(ConsumerRecord<String, WorkerMessage> record) {
        WorkerMessage message = record.value();
        // The deserializer already validated these headers; reading them again cannot fail.
        ControlHeaders.Stamp stamp = ControlHeaders.read(record.headers());
        meters.received(message.messageType().value(), stamp.sentAtEpochNanos(), ControlHeaders.epochNanos(clock));
        if (message.body() instanceof CollectiveBootstrap bootstrap) {
            // for the step thread, which may be blocked in a collective call waiting for it: not through the loop
            bootstraps.offer(bootstrap);
            return;
        }
        loop.deliver(new Received<>(message, stamp));
    }
}
