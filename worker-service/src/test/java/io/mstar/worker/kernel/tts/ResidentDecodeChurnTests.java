package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.resident.ResidentStats;

/**
 * Resident planning on a host device under 10,000 steps of churn ({@link ResidentChurn}): the mirror equals the
 * tables after every step and the resident tokens equal the eager ones, bit for bit; and the churn really did what it
 * claims (offloads, reloads, removals, changed sampling, page crossings, stale rows, eager fallbacks).
 */
class ResidentDecodeChurnTests {

    @Test
    void tenThousandStepsOfChurnKeepTheMirrorEqualToTheTablesAndTheResidentTokensEqualToTheEagerOnes() throws Exception {
        long seed = Seeds.of("ResidentDecodeChurnTests");
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (HostDevice device = new HostDevice(HostDevice.NAME, 256 << 20)) {
            ResidentChurn.Summary s = new ResidentChurn(device, () -> new HostLmBackend(weights),
                    () -> new HostLmBackend(weights)).run(seed, 10_000);
            assertThat(s.replays()).as("steps on tables").isGreaterThan(5_000);
            assertThat(s.timedPhases()).as("each phase of each replay timed once")
                    .containsOnlyKeys(ResidentStats.Phase.values()).allSatisfy((p, n) -> assertThat(n).isEqualTo(s.replays()));
            assertThat(s.captures()).as("two captures per padded size at most").isBetween(4L, 8L);
            assertThat(s.batchTooLarge()).isPositive();
            assertThat(s.counts()).containsKeys("offloaded", "reloaded", "removed", "sampling changed", "finished",
                    "new page");
            assertThat(s.newRows()).isGreaterThan(100);
            assertThat(s.staleRows()).as("rows that ran eagerly in between").isPositive();
            assertThat(s.refusal()).isNull();
        }
    }

    @Test
    void aBackendWithoutAResidentForwardIsRefusedAndItsNodeRunsEagerlyWithTheSameTokens() throws Exception {
        long seed = Seeds.of("ResidentDecodeChurnTests.refused");
        ToyTtsWeights weights = ToyTtsWeights.generate();
        try (HostDevice device = new HostDevice(HostDevice.NAME, 256 << 20)) {
            HostLmBackend java = new HostLmBackend(weights);
            LmBackend wrapped = java::run; // not one of the two built-in backends
            ResidentChurn.Summary s = new ResidentChurn(device, () -> java, () -> wrapped).run(seed, 300);
            assertThat(s.refusal()).as("the resource's reason").contains("has no resident forward");
            assertThat(s.replays()).isZero();
            assertThat(s.counts()).containsKey("finished");
        }
    }
}
