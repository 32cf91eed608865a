package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TopicsAndEntitiesTests {

    @Test
    void defaultPrefixNamesTheArchitectureTopics() {
        Topics topics = Topics.withDefaultPrefix();

        assertThat(topics.conductor()).isEqualTo("mstar.conductor");
        assertThat(topics.worker(0)).isEqualTo("mstar.worker.worker-0");
        assertThat(topics.worker(EntityId.worker(12))).isEqualTo("mstar.worker.worker-12");
        assertThat(topics.deadLetter()).isEqualTo("mstar.dlq");
    }

    @Test
    void prefixSeparatesDeploymentsOnOneCluster() {
        Topics topics = new Topics("staging-2");

        assertThat(topics.all(List.of(0, 1)))
                .containsExactly("staging-2.conductor", "staging-2.worker.worker-0", "staging-2.worker.worker-1", "staging-2.dlq");
        assertThat(topics.consumerGroup(EntityId.CONDUCTOR)).isEqualTo("staging-2.conductor");
        assertThat(topics.consumerGroup(EntityId.worker(3))).isEqualTo("staging-2.worker-3");
    }

    @Test
    void inboxIsTheTopicAnEntityConsumes() {
        Topics topics = Topics.withDefaultPrefix();

        assertThat(topics.inbox(EntityId.CONDUCTOR)).isEqualTo("mstar.conductor");
        assertThat(topics.inbox(EntityId.worker(1))).isEqualTo("mstar.worker.worker-1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "slash/es", "ünïcode"})
    void illegalPrefixesAreRejected(String prefix) {
        assertThatThrownBy(() -> new Topics(prefix)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("topic prefix");
    }

    @Test
    void theConductorHasNoWorkerTopic() {
        assertThatThrownBy(() -> Topics.withDefaultPrefix().worker(EntityId.CONDUCTOR))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void entityIdsRoundTripTheirWireForm() {
        assertThat(EntityId.parse("conductor")).isEqualTo(EntityId.CONDUCTOR);
        assertThat(EntityId.parse("worker-7").workerOrdinal()).isEqualTo(7);
        assertThat(EntityId.worker(7).value()).isEqualTo("worker-7");
        assertThat(EntityId.CONDUCTOR.isConductor()).isTrue();
        assertThat(EntityId.worker(0).isWorker()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "worker-", "worker--1", "worker-01", "Worker-1", "conductor-0", "worker-1 "})
    void malformedEntityIdsAreRejected(String value) {
        assertThatThrownBy(() -> EntityId.parse(value)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theConductorHasNoOrdinal() {
        assertThatThrownBy(EntityId.CONDUCTOR::workerOrdinal).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void incarnationsDifferPerDraw() {
        assertThat(Incarnation.random()).isNotEqualTo(Incarnation.random());
        assertThat(Incarnation.random().value()).matches("[0-9a-f]{16}");
    }
}
