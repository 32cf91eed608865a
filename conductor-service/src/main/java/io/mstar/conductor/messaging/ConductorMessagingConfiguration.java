package io.mstar.conductor.messaging;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.util.backoff.FixedBackOff;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.WorkerOutbox;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlClientSettings;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.ControlRecordRejectedException;
import io.mstar.messaging.ConductorMessageDeserializer;
import io.mstar.messaging.DeadLetterReason;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Topics;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.ConductorMessageType;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageType;

/**
 * The conductor's control plane on Kafka (ARCHITECTURE §3.2): topics created at start-up, one idempotent
 * producer, and the inbox container whose listener thread only decodes and hands off. A record that fails
 * the deserializer goes to {@code <prefix>.dlq} at once — never retried, the same bytes fail the same way —
 * and consumption carries on.
 */
@Configuration(proxyBeanMethods = false)
class ConductorMessagingConfiguration {

    private static final Logger log = LoggerFactory.getLogger(ConductorMessagingConfiguration.class);

    @Bean
    DeploymentConfig deploymentConfig(DeploymentProperties properties) {
        return DeploymentConfig.loadOrDefault(properties.config());
    }

    @Bean
    Topics topics(MessagingProperties properties) {
        return new Topics(properties.topicPrefix());
    }

    @Bean
    ControlIdentity controlIdentity(DeploymentConfig config, DeploymentProperties properties) {
        ControlIdentity identity = new ControlIdentity(EntityId.CONDUCTOR, Incarnation.random(), config.digest());
        log.info("conductor incarnation {}, deployment config {} (digest {}), workers {}", identity.incarnation(),
                properties.config().isBlank() ? "built-in default" : properties.config(), identity.config(),
                config.workerOrdinals());
        return identity;
    }

    @Bean
    WireCodec wireCodec() {
        return new WireCodec();
    }

    @Bean
    ControlPlaneMeters controlPlaneMeters(MeterRegistry registry) {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.CONDUCTOR);
        // The conductor sends to workers and receives on its own topic.
        meters.declareMessageTypes(Arrays.stream(WorkerMessageType.values()).map(WorkerMessageType::value).toList(),
                Arrays.stream(ConductorMessageType.values()).map(ConductorMessageType::value).toList());
        return meters;
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
        return new DefaultKafkaProducerFactory<>(ControlClientSettings.producer(kafka.buildProducerProperties(), identity.self()));
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

    /** The lifecycle's outbox: a failed send is logged; the request's deadline or drain timeout turns it into an error. */
    @Bean
    WorkerOutbox workerOutbox(ControlPlaneSender sender) {
        return (worker, body) -> sender.sendToWorker(worker, WorkerMessage.of(body)).whenComplete((metadata, error) -> {
            if (error != null) {
                log.warn("sending {} to {} failed: {}", WorkerMessage.of(body).messageType().value(), worker, error.toString());
            }
        });
    }

    @Bean
    InboxPosition inboxPosition() {
        return new InboxPosition();
    }

    @Bean
    ConcurrentMessageListenerContainer<String, ConductorMessage> conductorInboxContainer(KafkaProperties kafka,
            Topics topics, ControlIdentity identity, WireCodec codec, ControlPlaneMeters meters,
            KafkaTemplate<String, byte[]> deadLetterTemplate, InboxPosition position, LifecycleLoop loop) {
        DefaultKafkaConsumerFactory<String, ConductorMessage> consumerFactory = new DefaultKafkaConsumerFactory<>(
                ControlClientSettings.consumer(kafka.buildConsumerProperties(), topics, identity.self()),
                StringDeserializer::new,
                () -> new ErrorHandlingDeserializer<>(new ConductorMessageDeserializer(codec, identity.config())));
        ContainerProperties containerProperties = new ContainerProperties(topics.conductor());
        // Offsets never resume anything (a start seeks to the end, ARCHITECTURE §3.2), so commit rarely and
        // without blocking: a synchronous commit per poll added milliseconds to every control-plane hop.
        containerProperties.setAckMode(ContainerProperties.AckMode.TIME);
        containerProperties.setAckTime(ControlClientSettings.CONSUMER_COMMIT_INTERVAL_MS);
        containerProperties.setSyncCommits(false);
        containerProperties.setGroupId(topics.consumerGroup(identity.self()));
        containerProperties.setMessageListener(new ConductorInbox(loop, meters));
        containerProperties.setListenerTaskExecutor(new SimpleAsyncTaskExecutor("mstar-conductor-inbox-"));
        containerProperties.setConsumerRebalanceListener(new ConsumerAwareRebalanceListener() {
            @Override
            public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
                position.onAssigned(consumer, partitions);
                log.info("conductor inbox positioned at the end of {}", partitions);
            }

            @Override
            public void onPartitionsRevokedAfterCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
                position.onRemoved(partitions);
            }

            @Override
            public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
                position.onRemoved(partitions);
            }
        });
        ConcurrentMessageListenerContainer<String, ConductorMessage> container =
                new ConcurrentMessageListenerContainer<>(consumerFactory, containerProperties);
        container.setCommonErrorHandler(deadLetterErrorHandler(deadLetterTemplate, topics, identity.self(), meters));
        meters.bindConsumerLag(() -> container.metrics().values());
        return container;
    }

    private static DefaultErrorHandler deadLetterErrorHandler(KafkaTemplate<String, byte[]> template, Topics topics,
            EntityId receiver, ControlPlaneMeters meters) {
        // Partition -1: the producer picks one, so the dead-letter topic may have fewer partitions than the source.
        DeadLetterPublishingRecoverer publisher = new DeadLetterPublishingRecoverer(template,
                (record, failure) -> new TopicPartition(topics.deadLetter(), -1));
        publisher.setHeadersFunction((record, failure) ->
                ControlHeaders.deadLetter(receiver, ControlRecordRejectedException.reasonOf(failure)));
        DefaultErrorHandler handler = new DefaultErrorHandler((record, failure) -> {
            DeadLetterReason reason = ControlRecordRejectedException.reasonOf(failure);
            publisher.accept(record, failure);
            meters.deadLettered(reason);
            log.warn("dead-lettered {}-{}@{} from {}: {} ({})", record.topic(), record.partition(), record.offset(),
                    ControlHeaders.text(record.headers(), ControlHeaders.SENDER), reason.value(), rootMessage(failure));
        }, new FixedBackOff(0L, 0L));
        return handler;
    }

    private static String rootMessage(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage();
    }
}
