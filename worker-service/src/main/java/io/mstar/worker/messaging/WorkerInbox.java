package io.mstar.worker.messaging;

import java.time.Clock;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.MessageListener;

import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.Received;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.engine.EngineLoop;

/**
 * The listener of {@code <prefix>.worker.worker-<n>}. Runs on the listener thread and only counts, times and
 * hands each decoded message to the engine loop; it touches no worker state. Records that failed to decode
 * never reach it: the error handler dead-letters them.
 */
final class WorkerInbox implements MessageListener<String, WorkerMessage> {

    private final EngineLoop loop;
    private final ControlPlaneMeters meters;
    private final Clock clock = Clock.systemUTC();

    WorkerInbox(EngineLoop loop, ControlPlaneMeters meters) {
        this.loop = loop;
        this.meters = meters;
    }

    @Override
    public void onMessage(ConsumerRecord<String, WorkerMessage> record) {
        WorkerMessage message = record.value();
        // The deserializer already validated these headers; reading them again cannot fail.
        ControlHeaders.Stamp stamp = ControlHeaders.read(record.headers());
        meters.received(message.messageType().value(), stamp.sentAtEpochNanos(), ControlHeaders.epochNanos(clock));
        loop.deliver(new Received<>(message, stamp));
    }
}
