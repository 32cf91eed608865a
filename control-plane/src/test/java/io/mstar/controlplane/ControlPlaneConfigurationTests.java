package io.mstar.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.serialization.Deserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.DeploymentConfigException;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Topics;

/**
 * The shared control-plane wiring in a real application context, as a service imports it; nothing here reaches a
 * broker (the containers are built, not started).
 */
class ControlPlaneConfigurationTests {

    /** What a service adds: its identity and meters. */
    @Configuration(proxyBeanMethods = false)
    @Import(ControlPlaneConfiguration.class)
    @EnableConfigurationProperties(KafkaProperties.class)
    static class AService {

        @Bean
        ControlIdentity controlIdentity(DeploymentConfig config) {
            return new ControlIdentity(EntityId.worker(1), Incarnation.random(), config.digest());
        }

        @Bean
        ControlPlaneMeters controlPlaneMeters() {
            return new ControlPlaneMeters(new SimpleMeterRegistry(), ControlPlaneMeters.Role.WORKER);
        }
    }

    /** Reads the topics the context declares the way KafkaAdmin does when it creates them. */
    private static final class DeclaredTopics extends KafkaAdmin {

        DeclaredTopics() {
            super(Map.of());
        }

        Collection<NewTopic> declared() {
            return newTopics();
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(AService.class)
            // No KafkaAdmin, and lazy: nothing here opens a client to the unreachable address (closing one waits).
            .withPropertyValues("spring.kafka.bootstrap-servers=127.0.0.1:1", "spring.main.lazy-initialization=true",
                    "mstar.data-plane.secret=test-only-data-plane-secret-0123456789abcdef");

    @Test
    void topicsOfTheDeploymentAreDeclaredWithTheConfiguredPrefixPartitionsAndReplicas() {
        runner.withPropertyValues("mstar.messaging.topic-prefix=blue", "mstar.messaging.partitions=3",
                "mstar.messaging.replication-factor=2").run(context -> {
            assertThat(context).hasNotFailed();
            Topics topics = context.getBean(Topics.class);
            assertThat(topics.prefix()).isEqualTo("blue");
            DeclaredTopics admin = new DeclaredTopics();
            admin.setApplicationContext(context);
            List<NewTopic> declared = List.copyOf(admin.declared());
            // The built-in deployment has workers 0 and 1.
            assertThat(declared).extracting(NewTopic::name)
                    .containsExactly("blue.conductor", "blue.worker.worker-0", "blue.worker.worker-1", "blue.dlq");
            assertThat(declared).allSatisfy(topic -> {
                assertThat(topic.numPartitions()).isEqualTo(3);
                assertThat(topic.replicationFactor()).isEqualTo((short) 2);
            });
        });
    }

    @Test
    void anInboxContainerReadsTheServicesOwnTopicInItsOwnGroupAndCommitsRarelyWithoutBlocking() {
        runner.run(context -> {
            Topics topics = context.getBean(Topics.class);
            Deserializer<String> decoder = (topic, bytes) -> new String(bytes);
            ConcurrentMessageListenerContainer<String, String> container = context.getBean(ControlInboxes.class)
                    .container(topics.worker(1), () -> decoder, record -> { });
            ContainerProperties properties = container.getContainerProperties();
            assertThat(properties.getTopics()).containsExactly("mstar.worker.worker-1");
            assertThat(properties.getGroupId()).isEqualTo("mstar.worker-1");
            assertThat(properties.getAckMode()).isEqualTo(ContainerProperties.AckMode.TIME);
            assertThat(properties.isSyncCommits()).isFalse();
            assertThat(container.isRunning()).isFalse();
        });
    }

    @Test
    void aPartitionCountBelowOneIsRefusedAtStartUp() {
        runner.withPropertyValues("mstar.messaging.partitions=0").run(context ->
                assertThatThrownBy(() -> context.getBean(Topics.class)).rootCause()
                        .hasMessageContaining("mstar.messaging.partitions must be >= 1, was 0"));
    }

    @Test
    void anInvalidDeploymentConfigFailsStartUpWithOneAnalysisNamingTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("deployment.yaml");
        Files.writeString(file, "workers: [this is not a deployment]\n");
        runner.withPropertyValues("mstar.deployment.config=" + file).run(context -> {
            Throwable failure = catchThrowable(() -> context.getBean(DeploymentConfig.class));
            assertThat(failure).isNotNull().rootCause().isInstanceOf(DeploymentConfigException.class);
            // Registered in META-INF/spring.factories, which is how Spring Boot finds it at start-up.
            List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation().load(FailureAnalyzer.class,
                    null, FailureHandler.handleMessage((message, error) -> { })); // Boot's own need arguments; skip them
            assertThat(analyzers).hasAtLeastOneElementOfType(DeploymentConfigFailureAnalyzer.class);
            FailureAnalysis analysis = new DeploymentConfigFailureAnalyzer().analyze(failure);
            assertThat(analysis.getDescription()).startsWith("The deployment config is invalid: ").contains(file.toString());
            assertThat(analysis.getAction()).contains("mstar.deployment.config");
        });
    }
}
