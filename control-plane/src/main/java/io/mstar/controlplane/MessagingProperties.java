package io.mstar.controlplane;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Kafka control-plane settings ({@code mstar.messaging.*}); must be the same for every service of one
 * deployment. Broker addresses come from the standard {@code spring.kafka.bootstrap-servers}.
 *
 * @param topicPrefix prefix of every topic name (default {@code mstar}); give each deployment sharing one
 *     Kafka cluster its own prefix, or they read each other's traffic (and dead-letter it on the digest)
 * @param partitions partitions of each topic created at start-up (default 1); more spread a busy conductor
 *     topic over brokers but give up nothing in ordering, since keys keep a request on one partition.
 *     Existing topics are not changed.
 * @param replicationFactor replicas of each topic created at start-up (default 1, right for one local
 *     broker); use 3 on a real cluster so losing a broker loses no control message
 */
@ConfigurationProperties("mstar.messaging")
public record MessagingProperties(@DefaultValue("mstar") String topicPrefix, @DefaultValue("1") int partitions,
        @DefaultValue("1") short replicationFactor) {

    public MessagingProperties {
        if (partitions < 1) {
            throw new IllegalArgumentException("mstar.messaging.partitions must be >= 1, was " + partitions);
        }
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("mstar.messaging.replication-factor must be >= 1, was " + replicationFactor);
        }
    }
}
