package io.mstar.conductor.messaging;

import java.util.Arrays;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.WorkerOutbox;
import io.mstar.controlplane.ControlInboxes;
import io.mstar.controlplane.ControlPlaneConfiguration;
import io.mstar.controlplane.DeploymentProperties;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlMessageDeserializer;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Topics;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.ConductorMessageType;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageType;

/**
 * The conductor's own part of the control plane; the shared part (topics, producer, sender, dead-lettering inbox
 * containers) is {@link ControlPlaneConfiguration}. Its inbox is {@code <prefix>.conductor}, handed to the
 * lifecycle loop.
 */
@Configuration(proxyBeanMethods = false)
@Import(ControlPlaneConfiguration.class)
class ConductorMessagingConfiguration {

    private static final Logger log = LoggerFactory.getLogger(ConductorMessagingConfiguration.class);

    @Bean
    ControlIdentity controlIdentity(DeploymentConfig config, DeploymentProperties properties) {
        ControlIdentity identity = new ControlIdentity(EntityId.CONDUCTOR, Incarnation.random(), config.digest());
        log.info("conductor incarnation {}, deployment config {} (digest {}), workers {}", identity.incarnation(),
                properties.config().isBlank() ? "built-in default" : properties.config(), identity.config(),
                config.workerOrdinals());
        return identity;
    }

    @Bean
    ControlPlaneMeters controlPlaneMeters(MeterRegistry registry) {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.CONDUCTOR);
        // The conductor sends to workers and receives on its own topic.
        meters.declareMessageTypes(Arrays.stream(WorkerMessageType.values()).map(WorkerMessageType::value).toList(),
                Arrays.stream(ConductorMessageType.values()).map(ConductorMessageType::value).toList());
        return meters;
    }

    /** The lifecycle's outbox: a refused send is logged here; the lifecycle fails a running request whose send it was. */
    @Bean
    WorkerOutbox workerOutbox(ControlPlaneSender sender) {
        return (worker, body) -> sender.sendToWorker(worker, WorkerMessage.of(body)).whenComplete((metadata, error) -> {
            if (error != null) {
                log.warn("sending {} to {} failed: {}", WorkerMessage.of(body).messageType().value(), worker, error.toString());
            }
        });
    }

    @Bean
    ConcurrentMessageListenerContainer<String, ConductorMessage> conductorInboxContainer(ControlInboxes inboxes,
            Topics topics, ControlIdentity identity, WireCodec codec, ControlPlaneMeters meters, LifecycleLoop loop) {
        return inboxes.container(topics.conductor(), () -> ControlMessageDeserializer.conductor(codec, identity.config()),
                new ConductorInbox(loop, meters));
    }
}
