package io.mstar.conductor.tensors;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.ServedTensors;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;

/**
 * The conductor's tensors: a host device, the served source and its server on the data port, the reader of
 * client-bound outputs. The context closes them in reverse order of creation, after the lifecycle loop stopped.
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

    @Bean(destroyMethod = "close")
    TensorServer conductorTensorServer(ServedTensors served, ConductorDataProperties properties) {
        return TensorServer.start(served, properties.bindHost(), properties.port(), advertisedHost(properties),
                properties.ioThreads());
    }

    @Bean(destroyMethod = "close")
    ArenaReader conductorArenaReader() {
        return new ArenaReader(Path.of("/dev/shm"));
    }

    @Bean(destroyMethod = "close")
    TensorReader conductorTensorReader(ArenaReader arena, MeterRegistry registry, ConductorDataProperties properties) {
        // A set that tolerates the advertised host being one of the loopback names (a container named localhost).
        return new TensorReader(ReaderSettings.defaults("conductor", new LinkedHashSet<>(List.of(
                advertisedHost(properties), "localhost", "127.0.0.1"))), arena, registry);
    }

    @Bean
    ConductorTensorMeters conductorTensorMeters(ServedTensors served, HostDevice device) {
        return new ConductorTensorMeters(served, device);
    }

    @Bean
    ConductorTensors conductorTensors(HostDevice device, ServedTensors served, TensorReader reader, TensorServer server) {
        return new ConductorTensors(device, served, reader, TensorUuids.forEntity(EntityId.CONDUCTOR.value()),
                server.sessionId());
    }

    private static String advertisedHost(ConductorDataProperties properties) {
        if (!properties.advertisedHost().isBlank()) {
            return properties.advertisedHost().trim();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
