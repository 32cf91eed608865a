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
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
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
            subscribeAndAwaitPosition(consumer, topic, position, rebalances);
            send(producer, topic, "first");
            assertThat(values(pollUntil(consumer, position, 1))).containsExactly("first");

            // A rebalance takes the partition away and gives it back on the next poll; what is sent before it runs
            // must still be read, as a broker restart's rebalance must not lose the other services' messages.
            consumer.enforceRebalance();
            send(producer, topic, "during-1");
            send(producer, topic, "during-2");
            assertThat(values(pollUntil(consumer, position, 2))).containsExactly("during-1", "during-2");
            assertThat(rebalances).containsExactly("assigned", "revoked", "resumed");
            assertThat(position.isPositioned()).isTrue();
        }
    }

    /**
     * After a broker restart the consumer holds its position unvalidated (a new leader epoch) until the broker
     * answers; a rebalance in that window once made the partition start at the end again, skipping what was sent
     * meanwhile. A seek carrying a leader epoch puts the position in the same state.
     */
    @Test
    void aPartitionTakenAwayWhileItsPositionAwaitsValidationStillResumesWhereReadingStopped() {
        String topic = "inbox-b";
        InboxPosition position = new InboxPosition();
        List<String> rebalances = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer();
                KafkaConsumer<String, String> consumer = consumer("group-b")) {
            subscribeAndAwaitPosition(consumer, topic, position, rebalances);
            send(producer, topic, "first");
            ConsumerRecord<String, String> first = pollUntil(consumer, position, 1).get(0);
            assertThat(first.leaderEpoch()).as("a KRaft broker stamps the leader epoch").isPresent();

            TopicPartition partition = new TopicPartition(topic, first.partition());
            consumer.seek(partition, new OffsetAndMetadata(first.offset() + 1, first.leaderEpoch(), ""));
            consumer.enforceRebalance();
            send(producer, topic, "during-1");
            send(producer, topic, "during-2");
            assertThat(values(pollUntil(consumer, position, 2))).containsExactly("during-1", "during-2");
            assertThat(rebalances).containsExactly("assigned", "revoked", "resumed");
        }
    }

    private static void subscribeAndAwaitPosition(KafkaConsumer<String, String> consumer, String topic,
            InboxPosition position, List<String> rebalances) {
        consumer.subscribe(List.of(topic), listener(consumer, position, rebalances));
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (!position.isPositioned()) {
            assertThat(Instant.now()).as("assigned in time").isBefore(deadline);
            consumer.poll(Duration.ofMillis(100));
        }
    }

    private static ConsumerRebalanceListener listener(KafkaConsumer<String, String> consumer, InboxPosition position,
            List<String> rebalances) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) {
                    rebalances.add("revoked");
                    position.onRemoved(partitions);
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

    /** Polls as the inbox does: every record handed on is reported to {@code position}. */
    private static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> consumer,
            InboxPosition position, int count) {
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (records.size() < count && Instant.now().isBefore(deadline)) {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                records.add(record);
                position.handled(record);
            }
        }
        return records;
    }

    private static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::value).toList();
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
