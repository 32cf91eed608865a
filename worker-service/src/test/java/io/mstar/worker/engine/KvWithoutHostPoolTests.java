package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.mstar.testing.Seeds;

/**
 * {@link KvPressureTests}' workload without a host pool ({@code kv-host-pool-factor} 0): nothing can be offloaded, so
 * when every request holding pages waits for more, the youngest fails ({@code out_of_pages}) and the others complete
 * with their own tokens; no request hangs.
 */
class KvWithoutHostPoolTests extends KvPressureTests {

    @Override
    EngineProperties engineSettings() {
        return EngineProperties.defaults().withKvHostPoolFactor(0);
    }

    @Override
    @Test
    void twiceTheRequestsThePagesHoldAllCompleteWithTheirOwnTokens() throws Exception {
        long seed = Seeds.of("KvWithoutHostPoolTests");
        List<KvCacheEngineTests.Req> reqs = requests("q", 7, seed);
        reqs.forEach(r -> conductor.start(r.id(), List.of(r.pass())));
        conductor.pumpUntilRemoved(TIMEOUT);

        int failed = 0;
        for (KvCacheEngineTests.Req r : reqs) {
            ToyConductor.Run run = conductor.runs.get(r.id());
            if (run.failure != null) {
                failed++;
                assertThat(run.failure).as(r.id()).contains("no room to offload");
            } else {
                assertThat(run.firsts("out", 0)).as("%s (seed %d)", r.id(), seed).isEqualTo(r.expected());
            }
        }
        assertThat(failed).as("stuck requests failed, the others completed (seed %d)", seed)
                .isBetween(1, reqs.size() - 1);
    }
}
