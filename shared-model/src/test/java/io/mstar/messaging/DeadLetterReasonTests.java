package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

class DeadLetterReasonTests {

    /** Golden: values cross the wire and name metric series; changing one breaks dashboards and alerts. */
    @Test
    void valuesAreStable() {
        assertThat(Arrays.stream(DeadLetterReason.values()).map(DeadLetterReason::value)).containsExactly(
                "malformed_json", "unknown_message_type", "missing_field", "wrong_type", "invalid_value",
                "trailing_data", "too_deep", "too_large", "config_mismatch", "missing_header", "invalid_header",
                "unknown");
    }

    @Test
    void unknownValuesBecomeUnknown() {
        assertThat(DeadLetterReason.fromValue("config_mismatch")).isEqualTo(DeadLetterReason.CONFIG_MISMATCH);
        assertThat(DeadLetterReason.fromValue("cosmic_rays")).isEqualTo(DeadLetterReason.UNKNOWN);
        assertThat(DeadLetterReason.fromValue(null)).isEqualTo(DeadLetterReason.UNKNOWN);
    }

    @Test
    void reasonOfFindsARejectionAnywhereInTheCauseChain() {
        Exception wrapped = new RuntimeException("container",
                new IllegalStateException("deserializer", new ControlRecordRejectedException(DeadLetterReason.TOO_DEEP, "x")));

        assertThat(ControlRecordRejectedException.reasonOf(wrapped)).isEqualTo(DeadLetterReason.TOO_DEEP);
        assertThat(ControlRecordRejectedException.reasonOf(new RuntimeException("other"))).isEqualTo(DeadLetterReason.UNKNOWN);
    }
}
