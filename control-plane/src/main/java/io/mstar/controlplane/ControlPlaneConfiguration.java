package io.mstar.controlplane;

import java.util.List;

import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlClientSettings;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Topics;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.wire.WireCodec;

/**
 * The part of a service's control plane on Kafka (docs/architecture.md#topics-keys-and-headers) that the conductor and
 * the workers share: the deployment config, topics created at start-up, one idempotent producer behind the
 * {@link ControlPlaneSender}, {@link ControlInboxes} to build the inbox container, and the data plane's read grants
 * (docs/security.md). A service imports it and adds what is its own: its {@link ControlIdentity}, its
 * {@link ControlPlaneMeters} (the message types it sends and receives) and its inbox listener.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({MessagingProperties.class, DeploymentProperties.class,
        DataPlaneSecurityProperties.class})
public class ControlPlaneConfiguration {

    @Bean
    DeploymentConfig deploymentConfig(DeploymentProperties properties) {
        return DeploymentConfig.loadOrDefault(properties.config());
    }

    /** The deployment's tensor read grants (docs/security.md): minted by readers, checked by tensor servers. */
    @Bean
    ReadGrants readGrants(DataPlaneSecurityProperties properties) {
        return properties.readGrants();
    }

    @Bean
    Topics topics(MessagingProperties properties) {
        return new Topics(properties.topicPrefix());
    }

    @Bean
    WireCodec wireCodec() {
        return new WireCodec();
    }

    /** Every topic of the deployment; existing topics are left as they are. */
    @Bean
    KafkaAdmin.NewTopics controlTopics(Topics topics, DeploymentConfig config, MessagingProperties properties) {
        List<String> names = topics.all(config.workerOrdinals());
        return new KafkaAdmin.NewTopics(names.stream()
                .map(name -> new NewTopic(name, properties.partitions(), properties.replicationFactor()))
                .toArray(NewTopic[]::new));
    }

    @Bean
    ProducerFactory<String, byte[]> controlProducerFactory(KafkaProperties kafka, ControlIdentity identity) {
        DefaultKafkaProducerFactory<String, byte[]> factory = new DefaultKafkaProducerFactory<>(
                ControlClientSettings.producer(kafka.buildProducerProperties(), identity.self()));
        factory.setPhysicalCloseTimeout(ControlClientSettings.PRODUCER_CLOSE_TIMEOUT_SECONDS);
        return factory;
    }

    /** Used only by the dead-letter recoverer; control messages go through {@link ControlPlaneSender}. */
    @Bean
    KafkaTemplate<String, byte[]> deadLetterTemplate(ProducerFactory<String, byte[]> producerFactory) {
        return new KafkaTemplate<>(producerFactory);
    }

    @Bean
    ControlPlaneSender controlPlaneSender(ProducerFactory<String, byte[]> producerFactory, WireCodec codec, Topics topics,
            ControlIdentity identity, ControlPlaneMeters meters) {
        // The factory's shared producer: the factory closes it when the context closes.
        return new ControlPlaneSender(producerFactory.createProducer(), codec, topics, identity, meters);
    }

    @Bean
    InboxPosition inboxPosition() {
        return new InboxPosition();
    }

    @Bean
    ControlInboxes controlInboxes(KafkaProperties kafka, Topics topics, ControlIdentity identity, ControlPlaneMeters meters,
            KafkaTemplate<String, byte[]> deadLetterTemplate, InboxPosition position) {
        return new ControlInboxes(kafka, topics, identity, meters, deadLetterTemplate, position);
    }
}
