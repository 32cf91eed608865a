package io.mstar.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** A driver's options: defaults, values given, and a message naming the option for each way a command line is wrong. */
class DriverOptionsTests {

    private static final Map<String, String> DECLARED = new LinkedHashMap<>();

    static {
        DECLARED.put("--batches", "1,8,32");
        DECLARED.put("--rounds", "3");
        DECLARED.put("--pipeline", "true");
    }

    private static DriverOptions parse(String... args) {
        return DriverOptions.parse("Driver", args, DECLARED);
    }

    @Test
    void defaultsHoldUntilAnOptionIsGiven() {
        DriverOptions options = parse("--rounds", "5");
        assertThat(options.integer("--rounds", 1)).isEqualTo(5);
        assertThat(options.integers("--batches", 1)).containsExactly(1, 8, 32);
        assertThat(options.bool("--pipeline")).isTrue();
        assertThat(parse("--batches", "4, 2", "--pipeline", "false").integers("--batches", 1)).containsExactly(4, 2);
    }

    @Test
    void anUnknownOptionIsRefusedAndTheOptionsListed() {
        assertThatThrownBy(() -> parse("--rounds", "2", "--bogus", "1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("unknown option --bogus; Driver takes --batches (default 1,8,32), --rounds");
    }

    @Test
    void anOptionWithoutItsValueIsRefused() {
        assertThatThrownBy(() -> parse("--rounds")).hasMessageStartingWith("option --rounds needs a value");
        assertThatThrownBy(() -> parse("--rounds", "--batches", "1")).hasMessageStartingWith(
                "option --rounds needs a value");
    }

    @Test
    void aValueThatDoesNotParseNamesItsOption() {
        assertThatThrownBy(() -> parse("--rounds", "x").integer("--rounds", 1))
                .hasMessage("--rounds takes an integer, not 'x'");
        assertThatThrownBy(() -> parse("--rounds", "0").integer("--rounds", 1))
                .hasMessage("--rounds must be at least 1, not 0");
        assertThatThrownBy(() -> parse("--batches", "1,,2").integers("--batches", 1))
                .hasMessage("--batches takes integers separated by commas, not '1,,2'");
        assertThatThrownBy(() -> parse("--pipeline", "yes").bool("--pipeline"))
                .hasMessage("--pipeline takes true or false, not 'yes'");
    }

    @Test
    void aDeviceChoiceIsHostCudaOrAuto() {
        Map<String, String> device = Map.of("--device", "auto");
        assertThat(DriverOptions.parse("Driver", new String[] {"--device", "host"}, device).cuda("--device")).isFalse();
        assertThat(DriverOptions.parse("Driver", new String[] {"--device", "cuda"}, device).cuda("--device")).isTrue();
        assertThatThrownBy(() -> DriverOptions.parse("Driver", new String[] {"--device", "gpu"}, device).cuda("--device"))
                .hasMessage("--device takes host, cuda or auto, not 'gpu'");
    }

    @Test
    void helpAnswersTheUsage() {
        assertThatThrownBy(() -> parse("--help")).isInstanceOf(DriverOptions.HelpRequested.class)
                .hasMessage("Driver takes --batches (default 1,8,32), --rounds (default 3), --pipeline (default true),"
                        + " and --verbose");
    }

    @Test
    void anUndeclaredNameAskedForIsTheDriversBug() {
        assertThatThrownBy(() -> parse().get("--tokens")).isInstanceOf(IllegalStateException.class)
                .hasMessage("Driver declares no option --tokens");
    }
}
