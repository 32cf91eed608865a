package io.mstar.worker.messaging;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.controlplane.ControlInboxes;
import io.mstar.controlplane.ControlPlaneConfiguration;
import io.mstar.controlplane.DeploymentProperties;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlMessageDeserializer;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Topics;
import io.mstar.wire.ConductorMessageType;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageType;
import io.mstar.worker.engine.EngineLoop;
import io.mstar.worker.engine.WorkerProperties;
import io.mstar.worker.tp.NcclBootstraps;

/**
 * The worker's own part of the control plane; the shared part (topics, producer, sender, dead-lettering inbox
 * containers) is {@link ControlPlaneConfiguration}. Its inbox is {@code <prefix>.worker-<n>}, handed to the engine
 * loop.
 */
@Configuration(proxyBeanMethods = false)
@Import(ControlPlaneConfiguration.class)
class WorkerMessagingConfiguration {

    private static final Logger log = LoggerFactory.getLogger(WorkerMessagingConfiguration.class);

    @Bean
    ControlIdentity controlIdentity(DeploymentConfig config, DeploymentProperties properties, WorkerProperties worker) {
        if (!config.workerOrdinals().contains(worker.id())) {
            // Not fatal: the conductor ignores it, and an operator may be testing a config; but say so loudly.
            log.warn("worker {} is not named by the deployment config (workers {}); the conductor will ignore it",
                    worker.id(), config.workerOrdinals());
        }
        ControlIdentity identity = new ControlIdentity(EntityId.worker(worker.id()), Incarnation.random(), config.digest());
        log.info("{} incarnation {}, deployment config {} (digest {})", identity.self(), identity.incarnation(),
                properties.config().isBlank() ? "built-in default" : properties.config(), identity.config());
        return identity;
    }

    @Bean
    ControlPlaneMeters controlPlaneMeters(MeterRegistry registry) {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.WORKER);
        List<String> workerTypes = Arrays.stream(WorkerMessageType.values()).map(WorkerMessageType::value).toList();
        // A worker sends to the conductor and to its peers, and receives worker messages only.
        meters.declareMessageTypes(Stream.concat(
                Arrays.stream(ConductorMessageType.values()).map(ConductorMessageType::value), workerTypes.stream()).toList(),
                workerTypes);
        return meters;
    }

    @Bean
    ConcurrentMessageListenerContainer<String, WorkerMessage> workerInboxContainer(ControlInboxes inboxes, Topics topics,
            ControlIdentity identity, WireCodec codec, ControlPlaneMeters meters, EngineLoop loop,
            NcclBootstraps bootstraps) {
        return inboxes.container(topics.inbox(identity.self()), () -> ControlMessageDeserializer.worker(codec, identity.config()),
                new WorkerInbox(loop, bootstraps, meters));
    }
}
