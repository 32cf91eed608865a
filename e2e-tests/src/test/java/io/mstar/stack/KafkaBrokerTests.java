package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("kafka")
class KafkaBrokerTests {

    @TempDir
    Path stateDir;

    @Test
    void brokerCarriesARecordAndLeavesNeitherProcessNorDataBehind() throws Exception {
        Path dataDir = stateDir.resolve("kafka-data");
        KafkaBroker broker = KafkaBroker.start(ProjectLayout.discover(),
                KafkaBroker.Settings.in(dataDir, stateDir.resolve("logs/kafka.log")));
        ProcessHandle handle;
        try (broker) {
            handle = ProcessHandle.of(broker.process().pid()).orElseThrow();
            assertThat(broker.bootstrapServers()).startsWith("127.0.0.1:");

            try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic("probe", 1, (short) 1))).all().get();
            }
            byte[] payload = "hello".getBytes(StandardCharsets.UTF_8);
            try (var producer = new KafkaProducer<byte[], byte[]>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                    ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer())) {
                producer.send(new ProducerRecord<>("probe", payload)).get();
            }
            Optional<ConsumerRecord<byte[], byte[]>> received = firstRecord(broker.bootstrapServers(), "probe");
            assertThat(received).hasValueSatisfying(r -> assertThat(r.value()).isEqualTo(payload));
        }
        assertThat(handle.isAlive()).as("broker process after close").isFalse();
        assertThat(dataDir).doesNotExist();
        assertThat(Files.readString(stateDir.resolve("logs/kafka.log"))).contains("Kafka Server started");
    }

    private static Optional<ConsumerRecord<byte[], byte[]>> firstRecord(String bootstrap, String topic) {
        try (var consumer = new KafkaConsumer<byte[], byte[]>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "kafka-broker-tests",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    return Optional.of(record);
                }
            }
            return Optional.empty();
        }
    }
}
