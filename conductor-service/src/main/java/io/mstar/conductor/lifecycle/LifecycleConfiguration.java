package io.mstar.conductor.lifecycle;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.conductor.model.ConductorPolicies;
import io.mstar.conductor.tensors.ConductorTensors;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;

/** The lifecycle loop and the state it owns. */
@Configuration(proxyBeanMethods = false)
class LifecycleConfiguration {

    @Bean
    WorkerRegistryMeters workerRegistryMeters(MeterRegistry registry, DeploymentConfig config) {
        return new WorkerRegistryMeters(registry, configuredWorkers(config));
    }

    @Bean(destroyMethod = "close")
    RequestMeters requestMeters(MeterRegistry registry) {
        return new RequestMeters(registry);
    }

    @Bean
    ConductorPolicies conductorPolicies(DeploymentConfig config) {
        return ConductorPolicies.forDeployment(config);
    }

    @Bean
    LifecycleLoop lifecycleLoop(DeploymentConfig config, ConductorProperties properties, WorkerRegistryMeters meters,
            RequestMeters requestMeters, ConductorPolicies policies, WorkerOutbox outbox, ConductorTensors tensors) {
        RequestLifecycle requests = new RequestLifecycle(config, policies, outbox, tensors, requestMeters,
                properties.drainTimeout(), Clock.systemUTC());
        LifecycleLoop loop = new LifecycleLoop(
                new WorkerRegistry(configuredWorkers(config), properties.workerLossTimeout(), meters), requests, requestMeters);
        meters.bindStates(() -> {
            WorkerRegistry.Snapshot snapshot = loop.snapshot();
            return snapshot == null ? Map.of() : snapshot.states();
        });
        meters.bindSilences(() -> {
            WorkerRegistry.Snapshot snapshot = loop.snapshot();
            return snapshot == null ? Map.of() : snapshot.silences();
        });
        return loop;
    }

    @Bean
    ConductorHeartbeats conductorHeartbeats(DeploymentConfig config, ConductorProperties properties, WorkerOutbox outbox) {
        return new ConductorHeartbeats(configuredWorkers(config), properties.heartbeatInterval(), outbox);
    }

    private static List<EntityId> configuredWorkers(DeploymentConfig config) {
        return config.workerOrdinals().stream().map(EntityId::worker).toList();
    }
}
