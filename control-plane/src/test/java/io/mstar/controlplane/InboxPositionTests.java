package io.mstar.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import io.mstar.messaging.InboxPosition;

/**
 * On a real (embedded KRaft) broker: a consumer that starts skips what was sent before it, and one whose partition is
 * taken away and given back within the same process resumes where it stopped, skipping nothing sent meanwhile.
 */
class InboxPositionTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static EmbeddedKafkaKraftBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = new EmbeddedKafkaKraftBroker(1, 1, "inbox-a", "inbox-b");
        broker.afterPropertiesSet();
    }

    @AfterAll
    static void stopBroker() {
        broker.destroy();
    }

    @Test
    void aFreshConsumerStartsAtTheEndAndAGivenBackPartitionResumesWhereItStopped() {
        String topic = "inbox-a";
        InboxPosition position = new InboxPosition();
        List<String> rebalances = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer();
                KafkaConsumer<String, String> consumer = consumer("group-a")) {
            send(producer, topic, "before-start");
            consumer.subscribe(List.of(topic), listener(consumer, position, rebalances));
            Instant deadline = Instant.now().plus(TIMEOUT);
            while (!position.isPositioned()) {
                assertThat(Instant.now()).as("assigned in time").isBefore(deadline);
                consumer.poll(Duration.ofMillis(100));
            }
            send(producer, topic, "first");
            assertThat(pollUntil(consumer, 1)).containsExactly("first");

            // A rebalance takes the partition away and gives it back on the next poll; what is sent before it runs
            // must still be read, as a broker restart's rebalance must not lose the other services' messages.
            consumer.enforceRebalance();
            send(producer, topic, "during-1");
            send(producer, topic, "during-2");
            assertThat(pollUntil(consumer, 2)).containsExactly("during-1", "during-2");
            assertThat(rebalances).containsExactly("assigned", "revoked", "resumed");
            assertThat(position.isPositioned()).isTrue();
        }
    }

    private static ConsumerRebalanceListener listener(KafkaConsumer<String, String> consumer, InboxPosition position,
            List<String> rebalances) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    rebalances.add("revoked");
                    position.onRemoved(consumer, partitions);
                }
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    rebalances.add(position.onAssigned(consumer, partitions).isEmpty() ? "assigned" : "resumed");
                }
            }
        };
    }

    private static List<String> pollUntil(KafkaConsumer<String, String> consumer, int count) {
        List<String> values = new ArrayList<>();
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (values.size() < count && Instant.now().isBefore(deadline)) {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                values.add(record.value());
            }
        }
        return values;
    }

    private static void send(KafkaProducer<String, String> producer, String topic, String value) {
        try {
            producer.send(new ProducerRecord<>(topic, "k", value)).get();
        } catch (Exception e) {
            throw new AssertionError("send " + value, e);
        }
    }

    private static KafkaProducer<String, String> producer() {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString()),
                new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(String group) {
        return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest"), new StringDeserializer(), new StringDeserializer());
    }
}
