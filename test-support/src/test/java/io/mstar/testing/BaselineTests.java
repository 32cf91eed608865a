package io.mstar.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BaselineTests {

    @Test
    void countersAtTheirBaselinePass() {
        Baseline.of("worker-0").zero("live tensors", 0).equal("device bytes", 4096, 4096).check();
    }

    @Test
    void everyLeakIsNamedInOneFailure() {
        Baseline check = Baseline.of("worker-1").zero("live tensors", 2).zero("records", 0).equal("device bytes", 5000, 4096);
        assertThat(check.leaks()).containsExactly("live tensors=2 (baseline 0)", "device bytes=5000 (baseline 4096)");
        assertThatThrownBy(check::check).isInstanceOf(AssertionError.class)
                .hasMessage("worker-1 is not at its baseline: live tensors=2 (baseline 0), device bytes=5000 (baseline 4096)");
    }

    @Test
    void aCounterCheckedTwiceIsAMistakeOfTheTest() {
        assertThatThrownBy(() -> Baseline.of("w").zero("pages", 0).zero("pages", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pages");
    }
}
