package io.mstar.conductor.tensors;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.tensor.transport.TensorReader;

class TensorsConfigurationTests {

    @TempDir
    Path dir;

    @Test
    void aHostAdvertisedAsOneOfTheLoopbackNamesIsFine() {
        // In a container without a host name of its own, the advertised host is "localhost" (found by the image test).
        try (ArenaReader arena = new ArenaReader(dir);
                TensorReader reader = new TensorsConfiguration().conductorTensorReader(arena, new SimpleMeterRegistry(),
                        new ConductorDataProperties("0.0.0.0", 0, "localhost", 2, 1024), ReadGrants.disabled())) {
            assertThat(reader).isNotNull();
        }
    }
}
