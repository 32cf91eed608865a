package io.mstar.conductor.tensors;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.controlplane.DataPlaneSecurityProperties;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.tensor.transport.TensorServerSettings;

/**
 * The conductor's tensors: a host device, the served source and its server on the data port, the reader of
 * client-bound outputs; server and reader with the deployment's TLS settings ({@code mstar.data-plane.tls.*}). The context closes them in reverse order of creation, after the lifecycle loop stopped.
 */
@Configuration(proxyBeanMethods = false)
class TensorsConfiguration {

    @Bean(destroyMethod = "close")
    HostDevice conductorDevice() {
        return new HostDevice();
    }

    @Bean
    ServedTensors servedTensors() {
        return new ServedTensors();
    }

    /**
     * TLS on the data port from {@code mstar.data-plane.tls.*}, its files read and checked once: a certificate or key
     * that is missing or wrong stops the conductor here, naming the property (docs/security.md#tls-on-the-data-port).
     */
    @Bean
    DataPlaneTls conductorDataPlaneTls(DataPlaneSecurityProperties security) {
        return security.dataPlaneTls();
    }

    @Bean(destroyMethod = "close")
    TensorServer conductorTensorServer(ServedTensors served, ConductorDataProperties properties, ReadGrants grants,
            DataPlaneTls tls, MeterRegistry registry) {
        return TensorServer.start(served, new TensorServerSettings(properties.bindAddress(), properties.port(),
                advertisedHost(properties), properties.ioThreads(), "conductor", tls), grants, registry);
    }

    @Bean(destroyMethod = "close")
    ArenaReader conductorArenaReader() {
        return new ArenaReader(Path.of("/dev/shm"));
    }

    @Bean(destroyMethod = "close")
    TensorReader conductorTensorReader(ArenaReader arena, MeterRegistry registry, ConductorDataProperties properties,
            ReadGrants grants, DataPlaneTls tls) {
        // A set that tolerates the advertised host being one of the loopback names (a container named localhost).
        return new TensorReader(ReaderSettings.defaults("conductor", new LinkedHashSet<>(List.of(
                advertisedHost(properties), "localhost", "127.0.0.1"))).withTls(tls), arena, registry, grants,
                EntityId.CONDUCTOR.value());
    }

    /** The reader without TLS on the data port (tests). */
    TensorReader conductorTensorReader(ArenaReader arena, MeterRegistry registry, ConductorDataProperties properties,
            ReadGrants grants) {
        return conductorTensorReader(arena, registry, properties, grants, DataPlaneTls.disabled());
    }

    @Bean
    ConductorTensorMeters conductorTensorMeters(ServedTensors served, HostDevice device) {
        return new ConductorTensorMeters(served, device);
    }

    @Bean
    ConductorTensors conductorTensors(HostDevice device, ServedTensors served, TensorReader reader, TensorServer server,
            ConductorDataProperties properties) {
        return new ConductorTensors(device, served, reader, TensorUuids.forEntity(EntityId.CONDUCTOR.value()),
                server.sessionId(), properties.inlineInputMaxBytes());
    }

    private static String advertisedHost(ConductorDataProperties properties) {
        return TensorServerSettings.advertise(properties.bindAddress(), properties.advertisedHost());
    }
}
