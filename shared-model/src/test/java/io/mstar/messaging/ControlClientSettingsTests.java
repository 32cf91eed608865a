package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

class ControlClientSettingsTests {

    @Test
    void producerGuaranteesCannotBeWeakenedByTheBaseProperties() {
        Map<String, Object> base = Map.of(ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, 50,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "h:1",
                CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "rebootstrap");

        Map<String, Object> props = ControlClientSettings.producer(base, EntityId.worker(3));

        assertThat(props).containsEntry(ProducerConfig.ACKS_CONFIG, "all")
                .containsEntry(ProducerConfig.LINGER_MS_CONFIG, 0)
                .containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)
                .containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "h:1")
                .containsEntry(ProducerConfig.CLIENT_ID_CONFIG, "mstar-worker-3-producer")
                .containsEntry(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none");
    }

    @Test
    void consumerJoinsTheEntitysGroupAndNeverReplays() {
        Map<String, Object> props = ControlClientSettings.consumer(Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new Topics("p"), EntityId.CONDUCTOR);

        assertThat(props).containsEntry(ConsumerConfig.GROUP_ID_CONFIG, "p.conductor")
                .containsEntry(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest")
                .containsEntry(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    }
}
