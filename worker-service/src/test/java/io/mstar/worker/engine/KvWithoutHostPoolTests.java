package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.mstar.testing.Seeds;

/**
 * {@link KvPressureTests}' workload without a host pool ({@code kv-host-pool-factor} 0): nothing can be offloaded, so
 * when every request holding pages waits for more, the youngest is preempted by recompute
 * (docs/streaming-and-kv.md#preemption-by-recompute): its pages dropped, its KV recomputed from its fed tokens when it
 * next runs. Every request completes with exactly its own tokens, and no page is left behind.
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
        startTogether(reqs);
        conductor.pumpUntilRemoved(TIMEOUT);

        for (KvCacheEngineTests.Req r : reqs) {
            ToyConductor.Run run = conductor.runs.get(r.id());
            assertThat(run.failure).as("%s (seed %d)", r.id(), seed).isNull();
            assertThat(run.firsts("out", 0)).as("%s (seed %d)", r.id(), seed).isEqualTo(r.expected());
        }
        double recomputes = moves("recompute");
        assertThat(recomputes).as("requests preempted by recompute (seed %d)", seed).isPositive();
        assertThat(moves("offload")).as("no host pool, no offload").isZero();
        System.out.printf("KvWithoutHostPoolTests: seed %d, %.0f recomputes%n", seed, recomputes);
    } // everythingIsFreed: no page held

    double moves(String move) {
        return w0.registry.get(KvCaches.KV_MOVES).tags("move", move).functionCounter().count();
    }
}
