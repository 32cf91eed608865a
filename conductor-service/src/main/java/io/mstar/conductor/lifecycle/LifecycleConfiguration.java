package io.mstar.conductor.lifecycle;

import java.util.List;
import java.util.Map;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;

/** The lifecycle loop and the state it owns. */
@Configuration(proxyBeanMethods = false)
class LifecycleConfiguration {

    @Bean
    WorkerRegistryMeters workerRegistryMeters(MeterRegistry registry, DeploymentConfig config) {
        return new WorkerRegistryMeters(registry, configuredWorkers(config));
    }

    @Bean
    LifecycleLoop lifecycleLoop(DeploymentConfig config, ConductorProperties properties, WorkerRegistryMeters meters) {
        LifecycleLoop loop = new LifecycleLoop(
                new WorkerRegistry(configuredWorkers(config), properties.workerLossTimeout(), meters));
        meters.bindStates(() -> {
            WorkerRegistry.Snapshot snapshot = loop.snapshot();
            return snapshot == null ? Map.of() : snapshot.states();
        });
        return loop;
    }

    private static List<EntityId> configuredWorkers(DeploymentConfig config) {
        return config.workerOrdinals().stream().map(EntityId::worker).toList();
    }
}
