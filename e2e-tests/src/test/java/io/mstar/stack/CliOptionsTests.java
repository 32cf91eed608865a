package io.mstar.stack;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CliOptionsTests {

    @Test
    void upPutsTheConductorOnTheWellKnownPortByDefault() {
        CliOptions options = CliOptions.parse(new String[] {"up"});

        assertThat(options.conductorPort()).isEqualTo(8080);
        assertThat(options.basePort()).isZero();
        assertThat(options.workers()).isEqualTo(2);
    }

    @Test
    void conductorPortZeroAsksForAnyFreePort() {
        assertThat(CliOptions.parse(new String[] {"up", "--conductor-port", "0"}).conductorPort()).isZero();
        assertThat(CliOptions.parse(new String[] {"up", "--conductor-port", "18080"}).conductorPort()).isEqualTo(18080);
    }

    @Test
    void aNegativeOrNonNumericPortIsRefusedWithTheOptionNamed() {
        assertThatThrownBy(() -> CliOptions.parse(new String[] {"up", "--conductor-port", "-1"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--conductor-port");
        assertThatThrownBy(() -> CliOptions.parse(new String[] {"up", "--conductor-port", "x"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--conductor-port");
    }
}
