package io.mstar.messaging;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import io.mstar.deployment.ConfigDigest;

/**
 * Plain Kafka clients standing in for the other side of the control plane in service tests. Lives in
 * shared-model's test-jar so both services' tests use one copy without either depending on the other.
 */
public final class ControlRecords implements AutoCloseable {

    private final String brokers;
    private final KafkaProducer<String, byte[]> producer;

    public ControlRecords(String brokers) {
        this.brokers = brokers;
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.LINGER_MS_CONFIG, 0));
    }

    /** Sends with the control headers a real sender would stamp; {@code digest} null sends none at all. */
    public void send(String topic, String key, byte[] value, EntityId sender, Incarnation incarnation, ConfigDigest digest) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key, value);
        if (digest != null) {
            ControlHeaders.write(record.headers(), new ControlHeaders.Stamp(sender, incarnation, System.currentTimeMillis() * 1_000_000L, digest));
        }
        try {
            producer.send(record).get();
        } catch (Exception e) {
            throw new IllegalStateException("send to " + topic + " failed", e);
        }
    }

    /** Every record on partition 0 of {@code topic} from the beginning, polling until {@code count} arrived or {@code timeout}. */
    public List<ConsumerRecord<String, byte[]>> readFromStart(String topic, int count, Duration timeout) {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
            long deadline = System.nanoTime() + timeout.toNanos();
            while (records.size() < count && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            return records;
        }
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(2));
    }
}
