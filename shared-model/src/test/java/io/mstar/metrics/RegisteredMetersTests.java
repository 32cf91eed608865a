package io.mstar.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class RegisteredMetersTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void closeRemovesWhatWasAddedAndLeavesOtherMeters() {
        Counter other = Counter.builder("mstar.test.other").register(registry);
        RegisteredMeters meters = new RegisteredMeters(registry);
        Counter a = meters.add(Counter.builder("mstar.test.a").register(registry));
        meters.add(Counter.builder("mstar.test.a").register(registry));
        meters.add(Counter.builder("mstar.test.b").tag("reason", "x").register(registry));

        assertThat(meters.meters()).as("the same id twice is one meter").hasSize(2).first().isSameAs(a);

        meters.close();

        assertThat(registry.getMeters()).containsExactly(other);
        assertThat(meters.meters()).isEmpty();
    }

    @Test
    void aKeptMeterIsRegisteredOnceAndRegisteredAgainAfterClose() {
        RegisteredMeters meters = new RegisteredMeters(registry);
        int[] registrations = {0};
        Supplier<Counter> register = () -> {
            registrations[0]++;
            return Counter.builder("mstar.test.kept").tag("model", "m").register(registry);
        };
        Counter first = meters.computeIfAbsent(List.of("kept", "m"), register);
        assertThat(meters.<Counter>computeIfAbsent(List.of("kept", "m"), register)).isSameAs(first);
        assertThat(registrations[0]).isEqualTo(1);
        assertThat(meters.meters()).containsExactly(first);

        meters.close();
        Counter again = meters.computeIfAbsent(List.of("kept", "m"), register);

        assertThat(registrations[0]).as("a closed component keeps no removed meter").isEqualTo(2);
        assertThat(registry.getMeters()).containsExactly(again);
    }
}
