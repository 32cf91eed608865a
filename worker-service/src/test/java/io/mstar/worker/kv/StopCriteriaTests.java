package io.mstar.worker.kv;

import java.util.List;
import java.util.Set;

import io.mstar.request.SamplingConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StopCriteriaTests {

    @Test
    void stopsOnAnyEosIdUnlessIgnored() {
        StopCriteria criteria = new StopCriteria(Set.of(2, 7), 100, false);
        assertThat(criteria.check(5, 1)).isEqualTo(StopReason.NONE);
        assertThat(criteria.check(7, 3)).isEqualTo(StopReason.EOS);
        assertThat(criteria.check(2, 3).stops()).isTrue();
        StopCriteria ignoring = StopCriteria.of(List.of(2, 7), 100,
                new SamplingConfig(null, 0.6, 0, 1.0, true, 1.0, 0));
        assertThat(ignoring.check(7, 3)).isEqualTo(StopReason.NONE);
    }

    @Test
    void stopsOnceMaxTokensHaveBeenProduced() {
        StopCriteria criteria = StopCriteria.of(List.of(0), 3, SamplingConfig.DEFAULT);
        assertThat(criteria.check(9, 2)).isEqualTo(StopReason.NONE);
        assertThat(criteria.check(9, 3)).isEqualTo(StopReason.MAX_TOKENS);
        assertThat(criteria.check(0, 3)).as("EOS as the last allowed token is the model's own end")
                .isEqualTo(StopReason.EOS);
        assertThat(StopReason.NONE.stops()).isFalse();
        assertThatThrownBy(() -> new StopCriteria(Set.of(), -1, false)).isInstanceOf(IllegalArgumentException.class);
    }
}
