package io.mstar.messaging;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka client settings the control plane depends on, applied over whatever the operator configured
 * (bootstrap servers, security) so that no property file can quietly weaken them.
 */
public final class ControlClientSettings {

    /**
     * How long {@code send()} may block the calling owner loop waiting for topic metadata when the broker is
     * away. Kafka's default of 60 s would freeze the loop; 2 s keeps it turning (liveness) while readiness,
     * which watches acknowledgements, reports the outage.
     */
    public static final int PRODUCER_MAX_BLOCK_MS = 2_000;

    /**
     * How long closing the producer at shutdown may wait for its last sends. A reachable broker takes them in
     * milliseconds; with the broker gone nothing more will be delivered, and Spring's 30 s default only held every
     * service's exit that long (measured: 34 s from SIGTERM to exit with the broker killed).
     */
    public static final int PRODUCER_CLOSE_TIMEOUT_SECONDS = 3;

    /**
     * Consumer session timeout. Kafka's 45 s default is how long a group waits for a killed member before it
     * reassigns its partitions, i.e. how long a worker restarted after a crash would stay unready; 10 s
     * bounds that while tolerating a GC pause (the broker's minimum is 6 s).
     */
    public static final int CONSUMER_SESSION_TIMEOUT_MS = 10_000;
    /** How often a service commits its inbox offsets; they only feed lag tooling, never a resume. */
    public static final long CONSUMER_COMMIT_INTERVAL_MS = 5_000;

    private ControlClientSettings() {
    }

    /**
     * Idempotent, {@code acks=all}, {@code linger.ms=0}: control messages are small, rare and latency-bound. And it
     * keeps the cluster metadata it knows while no broker answers ({@code metadata.recovery.strategy=none}): Kafka
     * 4's default, {@code rebootstrap}, forgets every topic the moment its one known broker goes, so each send made
     * while the broker restarts waits {@link #PRODUCER_MAX_BLOCK_MS} for metadata and fails, and a lost report left its
     * request waiting for the deadline. With the metadata kept, a send during an outage is buffered and retried
     * until the broker is back (or {@code delivery.timeout.ms} passes), in order. Brokers are addressed by stable
     * names (a StatefulSet's, or the local stack's loopback port), so the known ones are the ones to go back to.
     */
    public static Map<String, Object> producer(Map<String, Object> base, EntityId self) {
        Map<String, Object> props = new HashMap<>(base);
        props.put(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, PRODUCER_MAX_BLOCK_MS);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "mstar-" + self.value() + "-producer");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return props;
    }

    /**
     * A consumer of {@code self}'s inbox in group {@code <prefix>.<entity>}. {@code latest} plus the seek to
     * the end on assignment: a (re)started process never replays its predecessor's traffic (§3.2). The value
     * deserializer is supplied as an instance by the caller.
     */
    public static Map<String, Object> consumer(Map<String, Object> base, Topics topics, EntityId self) {
        Map<String, Object> props = new HashMap<>(base);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, topics.consumerGroup(self));
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "mstar-" + self.value() + "-consumer");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, CONSUMER_SESSION_TIMEOUT_MS);
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, CONSUMER_SESSION_TIMEOUT_MS / 3);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        return props;
    }
}
