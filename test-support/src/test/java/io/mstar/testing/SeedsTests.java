package io.mstar.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SeedsTests {

    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private PrintStream out;
    private String property;

    @BeforeEach
    void capture() {
        out = System.out;
        property = System.getProperty(Seeds.PROPERTY);
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setOut(out);
        if (property == null) {
            System.clearProperty(Seeds.PROPERTY);
        } else {
            System.setProperty(Seeds.PROPERTY, property);
        }
    }

    @Test
    void theGivenSeedIsUsedAndPrintedSoARunCanBeReplayed() {
        System.setProperty(Seeds.PROPERTY, " -42 ");
        assertThat(Seeds.of("ReplayTest")).isEqualTo(-42L);
        assertThat(Seeds.withFixed("Fixed", 1, 2)).containsExactly(-42L);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("[seed] ReplayTest runs with -Dmstar.test.seed=-42")
                .contains("[seed] Fixed runs with -Dmstar.test.seed=-42");
    }

    @Test
    void withoutAPropertyEachRunGetsAFreshSeedAndPrintsIt() {
        System.clearProperty(Seeds.PROPERTY);
        long a = Seeds.of("Fresh");
        long b = Seeds.of("Fresh");
        assertThat(a).as("two fresh seeds (a 2^-64 chance of equal)").isNotEqualTo(b);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("[seed] Fresh runs with -Dmstar.test.seed=" + a)
                .contains("[seed] Fresh runs with -Dmstar.test.seed=" + b);
    }

    @Test
    void fixedSeedsRunFirstAndOneFreshSeedFollows() {
        System.clearProperty(Seeds.PROPERTY);
        assertThat(Seeds.withFixed("Fixed", 3, 77)).hasSize(3).startsWith(3L, 77L);
    }

    @Test
    void aSeedThatIsNotANumberIsAClearError() {
        System.setProperty(Seeds.PROPERTY, "abc");
        assertThatThrownBy(() -> Seeds.of("Bad")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mstar.test.seed").hasMessageContaining("abc");
    }
}
