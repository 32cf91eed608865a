package io.mstar.messaging;

import java.time.Clock;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;

/**
 * Encodes, keys, stamps and sends control messages. Any thread may call it (the Kafka producer is
 * thread-safe), but the owner loops are the intended callers. It does not own the producer: whoever created
 * it closes it. {@code messages.sent} moves when the broker acknowledges, not when the record is queued.
 */
public final class ControlPlaneSender {

    private final Producer<String, byte[]> producer;
    private final WireCodec codec;
    private final Topics topics;
    private final ControlIdentity identity;
    private final ControlPlaneMeters meters;
    private final Clock clock;

    public ControlPlaneSender(Producer<String, byte[]> producer, WireCodec codec, Topics topics, ControlIdentity identity,
            ControlPlaneMeters meters) {
        this.producer = producer;
        this.codec = codec;
        this.topics = topics;
        this.identity = identity;
        this.meters = meters;
        this.clock = Clock.systemUTC();
    }

    /** Sends to {@code worker}'s topic; the future completes on the producer's I/O thread. */
    public CompletableFuture<RecordMetadata> sendToWorker(EntityId worker, WorkerMessage message) {
        return send(topics.worker(worker), RecordKeys.of(message), codec.encode(message), message.messageType().value());
    }

    /** Sends to the conductor's topic; the future completes on the producer's I/O thread. */
    public CompletableFuture<RecordMetadata> sendToConductor(ConductorMessage message) {
        return send(topics.conductor(), RecordKeys.of(message, identity.self()), codec.encode(message),
                message.messageType().value());
    }

    private CompletableFuture<RecordMetadata> send(String topic, String key, byte[] value, String messageType) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key, value);
        ControlHeaders.write(record.headers(), identity.stamp(ControlHeaders.epochNanos(clock)));
        CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
        try {
            producer.send(record, (metadata, failure) -> {
                if (failure != null) {
                    result.completeExceptionally(failure);
                } else {
                    meters.sent(messageType);
                    result.complete(metadata);
                }
            });
        } catch (RuntimeException e) {
            // send() itself throws when metadata cannot be fetched within max.block.ms or the producer is closed.
            result.completeExceptionally(e);
        }
        return result;
    }
}
