package io.mstar.conductor.messaging;

import java.time.Clock;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.MessageListener;

import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.Received;
import io.mstar.wire.ConductorMessage;

/**
 * The listener of {@code <prefix>.conductor}. Runs on the listener thread and only counts, times and hands
 * each decoded message to the lifecycle loop; it touches no conductor state. Records that failed to decode
 * never reach it: the error handler dead-letters them.
 */
final class ConductorInbox implements MessageListener<String, ConductorMessage> {

    private final LifecycleLoop loop;
    private final ControlPlaneMeters meters;
    private final Clock clock = Clock.systemUTC();

    ConductorInbox(LifecycleLoop loop, ControlPlaneMeters meters) {
        this.loop = loop;
        this.meters = meters;
    }

    @Override
    public void onMessage(ConsumerRecord<String, ConductorMessage> record) {
        ConductorMessage message = record.value();
        // The deserializer already validated these headers; reading them again cannot fail.
        ControlHeaders.Stamp stamp = ControlHeaders.read(record.headers());
        meters.received(message.messageType().value(), stamp.sentAtEpochNanos(), ControlHeaders.epochNanos(clock));
        loop.deliver(new Received<>(message, stamp));
    }
}
