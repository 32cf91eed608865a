package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.ModelKernels;

/**
 * {@link KvWithoutHostPoolTests}' workload on a kernel that cannot recompute ({@code recordsFeeds} false): when every
 * request holding pages waits for more, the youngest waiting one fails ({@code out_of_pages}), the others complete
 * with their own tokens, and no request hangs.
 */
class KvWithoutRecomputeTests extends KvWithoutHostPoolTests {

    @Override
    ModelKernels kernels() {
        return new ModelKernels(KvCacheEngineTests.MODEL, Map.of(KvCacheEngineTests.LM,
                new KvCacheEngineTests.ToyLm(false)));
    }

    @Override
    @Test
    void twiceTheRequestsThePagesHoldAllCompleteWithTheirOwnTokens() throws Exception {
        long seed = Seeds.of("KvWithoutRecomputeTests");
        List<KvCacheEngineTests.Req> reqs = requests("q", 7, seed);
        startTogether(reqs);
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
        assertThat(moves("recompute")).isZero();
    }
}
