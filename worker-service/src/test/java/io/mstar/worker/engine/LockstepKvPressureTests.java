package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.mstar.messaging.EntityId;
import io.mstar.wire.MessageSource;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.WorkerMessage;

/**
 * {@link LockstepEngineTests} on KV pools of 6 pages per rank, which the tests' requests overflow: the leader offloads
 * requests to its host pool and reloads them; each batch carries those moves ({@code resident_delta}) and the follower
 * replays them before it runs the batch, choosing no victim of its own. Every scenario still runs in lockstep, and
 * after each replay every request of the batch is resident on the follower, as on the leader.
 */
class LockstepKvPressureTests extends LockstepEngineTests {

    @Override
    int kvPages() {
        return 6;
    }

    @Test
    void theFollowerReplaysTheLeadersMovesAndHoldsTheSameRequestsResident() throws Exception {
        List<KvCacheEngineTests.Req> reqs = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            reqs.add(new KvCacheEngineTests.Req("p" + i, new int[] {i % 16, (3 * i) % 16}, 10 + i % 4, 40L + i, null));
        }
        reqs.forEach(r -> conductor.start(r.id(), List.of(pass(r))));
        conductor.pumpUntilRemoved(TIMEOUT);
        awaitNoRequestsOnEitherWorker();
        for (KvCacheEngineTests.Req r : reqs) {
            assertThat(conductor.runs.get(r.id()).failure).as(r.id()).isNull();
            assertThat(conductor.runs.get(r.id()).firsts("out", 0)).as(r.id()).isEqualTo(r.expected());
        }
        assertFollowersRanTheLeadersBatches("under KV pressure");
        double[] offloads = workers.stream().mapToDouble(w -> moves(w, "offload")).toArray();
        double[] reloads = workers.stream().mapToDouble(w -> moves(w, "reload")).toArray();
        assertThat(offloads[0]).as("the leader offloaded").isPositive();
        for (int r = 1; r < ranks(); r++) {
            // a move is moot on a follower where its request is gone already, and moves after the last batch are
            // never sent: at most the leader's, and the residency check after each replay is what must hold
            assertThat(offloads[r]).as("rank %d replayed the offloads", r).isPositive().isLessThanOrEqualTo(offloads[0]);
            assertThat(reloads[r]).as("rank %d replayed the reloads", r).isLessThanOrEqualTo(reloads[0]);
            assertThat(workers.get(r).registry.get(EngineMeters.Definition.LOCKSTEP_ANOMALIES.declaration().name())
                    .tag("kind", EngineMeters.RESIDENT_MISMATCH).counter().count()).as("rank %d's resident mismatches", r)
                    .isZero();
        }
        System.out.printf("LockstepKvPressureTests: leader %.0f offloads, %.0f reloads; follower %.0f, %.0f%n",
                offloads[0], reloads[0], offloads[1], reloads[1]);
    }

    /**
     * The leader runs a batch on pages that a removed request gave back, and relays that removal behind the batch
     * (another record key, so it may arrive later): the follower holds the batch until the removal frees the same
     * pages here, then runs it whole.
     */
    @Test
    void aBatchOnPagesOfARemovedRequestWaitsOnTheFollowerForTheRelayedRemoval() throws Exception {
        String followerId = EntityId.worker(1).value();
        KvCacheEngineTests.Req first = new KvCacheEngineTests.Req("first", new int[] {1}, 16, 5L, null);
        conductor.start(first.id(), List.of(pass(first)));
        conductor.pumpUntil(() -> conductor.runs.get(first.id()).firsts("out", 0).size() >= 2, TIMEOUT);
        broker.hold(s -> s.to().equals(followerId) && s.message() instanceof WorkerMessage m
                && m.body() instanceof RemoveRequest r && r.source() == MessageSource.TP_RANK_0);
        conductor.abort(first.id());
        conductor.pumpUntil(() -> leader.requests() == 0, TIMEOUT);
        // six requests of a page each: the leader's pool holds them all, the follower's only five while "first" is there
        List<KvCacheEngineTests.Req> six = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            six.add(new KvCacheEngineTests.Req("s" + i, new int[] {i + 2}, 3, 60L + i, null));
        }
        six.forEach(r -> conductor.start(r.id(), List.of(pass(r))));
        conductor.pumpUntil(() -> six.stream().allMatch(r -> kernels.get(0).batches().stream()
                .anyMatch(b -> b.contains(r.id()))), TIMEOUT);
        long until = System.nanoTime() + 100_000_000L; // the follower has the batch it cannot fit yet
        conductor.pumpUntil(() -> System.nanoTime() > until, TIMEOUT);
        broker.release();
        conductor.pumpUntilRemoved(TIMEOUT);
        awaitNoRequestsOnEitherWorker();

        assertFollowersRanTheLeadersBatches("a batch on a removed request's pages");
        for (KvCacheEngineTests.Req r : six) {
            assertThat(conductor.runs.get(r.id()).failure).as(r.id()).isNull();
            assertThat(conductor.runs.get(r.id()).firsts("out", 0)).as(r.id()).isEqualTo(r.expected());
        }
    }

    private static double moves(TestWorker w, String move) {
        return w.registry.get(KvCaches.KV_MOVES).tags("move", move).functionCounter().count();
    }
}
