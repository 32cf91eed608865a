package io.mstar.controlplane;

import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.util.backoff.FixedBackOff;

import io.mstar.messaging.ControlClientSettings;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.ControlRecordRejectedException;
import io.mstar.messaging.DeadLetterReason;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Topics;

/**
 * Builds a service's inbox container: one consumer in the service's own group on its own topic, positioned at the
 * end of every partition it is given ({@link InboxPosition}), whose listener thread only decodes and hands off. A
 * record that fails the deserializer goes to {@code <prefix>.dlq} at once — never retried, the same bytes fail the
 * same way — with the reason and the receiver in its headers, and consumption carries on.
 */
public final class ControlInboxes {

    private static final Logger log = LoggerFactory.getLogger(ControlInboxes.class);

    private final KafkaProperties kafka;
    private final Topics topics;
    private final ControlIdentity identity;
    private final ControlPlaneMeters meters;
    private final KafkaTemplate<String, byte[]> deadLetterTemplate;
    private final InboxPosition position;

    ControlInboxes(KafkaProperties kafka, Topics topics, ControlIdentity identity, ControlPlaneMeters meters,
            KafkaTemplate<String, byte[]> deadLetterTemplate, InboxPosition position) {
        this.kafka = kafka;
        this.topics = topics;
        this.identity = identity;
        this.meters = meters;
        this.deadLetterTemplate = deadLetterTemplate;
        this.position = position;
    }

    /**
     * The container for {@code topic}; each consumer gets a fresh decoder from {@code decoders}, which turns a record
     * into the service's message type and throws {@link ControlRecordRejectedException} for anything it refuses. The
     * caller registers the container as a bean, so the context starts and stops it.
     */
    public <M> ConcurrentMessageListenerContainer<String, M> container(String topic, Supplier<Deserializer<M>> decoders,
            MessageListener<String, M> listener) {
        DefaultKafkaConsumerFactory<String, M> consumerFactory = new DefaultKafkaConsumerFactory<>(
                ControlClientSettings.consumer(kafka.buildConsumerProperties(), topics, identity.self()),
                StringDeserializer::new, () -> new ErrorHandlingDeserializer<>(decoders.get()));
        ContainerProperties properties = new ContainerProperties(topic);
        properties.setGroupId(topics.consumerGroup(identity.self()));
        // Offsets never resume anything (a start seeks to the end, docs/architecture.md#restarts-and-ordering), so
        // commit rarely and without blocking: a synchronous commit per poll added milliseconds to every control-plane
        // hop.
        properties.setAckMode(ContainerProperties.AckMode.TIME);
        properties.setAckTime(ControlClientSettings.CONSUMER_COMMIT_INTERVAL_MS);
        properties.setSyncCommits(false);
        properties.setMessageListener((MessageListener<String, M>) record -> {
            listener.onMessage(record);
            position.handled(record);
        });
        properties.setListenerTaskExecutor(new SimpleAsyncTaskExecutor("mstar-" + identity.self().value() + "-inbox-"));
        properties.setConsumerRebalanceListener(new ConsumerAwareRebalanceListener() {
            @Override
            public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
                List<TopicPartition> resumed = position.onAssigned(consumer, partitions);
                if (resumed.isEmpty()) {
                    log.info("{} inbox positioned at the end of {}", identity.self(), partitions);
                } else {
                    log.info("{} inbox given back {}: resumed {} where it stopped reading", identity.self(), partitions,
                            resumed);
                }
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
        ConcurrentMessageListenerContainer<String, M> container = new ConcurrentMessageListenerContainer<>(consumerFactory,
                properties);
        container.setCommonErrorHandler(deadLetterErrorHandler());
        meters.bindConsumerLag(() -> container.metrics().values());
        return container;
    }

    private DefaultErrorHandler deadLetterErrorHandler() {
        // Partition -1: the producer picks one, so the dead-letter topic may have fewer partitions than the source.
        DeadLetterPublishingRecoverer publisher = new DeadLetterPublishingRecoverer(deadLetterTemplate,
                (record, failure) -> new TopicPartition(topics.deadLetter(), -1));
        publisher.setHeadersFunction((record, failure) ->
                ControlHeaders.deadLetter(identity.self(), ControlRecordRejectedException.reasonOf(failure)));
        return new DefaultErrorHandler((record, failure) -> {
            DeadLetterReason reason = ControlRecordRejectedException.reasonOf(failure);
            publisher.accept(record, failure);
            position.handled(record);
            meters.deadLettered(reason);
            log.warn("dead-lettered {}-{}@{} from {}: {} ({})", record.topic(), record.partition(), record.offset(),
                    ControlHeaders.text(record.headers(), ControlHeaders.SENDER), reason.value(), rootMessage(failure));
        }, new FixedBackOff(0L, 0L));
    }

    private static String rootMessage(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage();
    }
}
