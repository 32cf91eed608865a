package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphNode;
import io.mstar.request.CurrentForwardPassInfo;

/** The engine's small parts on their own: phases, stream chunking, scheduling order, tombstones. */
class EngineBuildingBlocksTests {

    @Test
    void everyPhaseAndEventPairHasItsOutcome() {
        assertThat(RequestPhase.ACTIVE.on(RequestPhase.Event.FAIL)).isEqualTo(RequestPhase.FAILED);
        assertThat(RequestPhase.ACTIVE.on(RequestPhase.Event.DRAIN)).isEqualTo(RequestPhase.DRAINING);
        assertThat(RequestPhase.FAILED.on(RequestPhase.Event.FAIL)).isEqualTo(RequestPhase.FAILED);
        assertThat(RequestPhase.FAILED.on(RequestPhase.Event.DRAIN)).isEqualTo(RequestPhase.DRAINING);
        assertThat(RequestPhase.DRAINING.on(RequestPhase.Event.FAIL)).as("a drain is not undone by a failure")
                .isEqualTo(RequestPhase.DRAINING);
        assertThat(RequestPhase.DRAINING.on(RequestPhase.Event.DRAIN)).isEqualTo(RequestPhase.DRAINING);
    }

    @Test
    void chunksFollowRegistrationOrderWhateverOrderTokensLandIn() {
        long seed = System.nanoTime();
        System.out.println("EngineBuildingBlocksTests seed " + seed);
        Random random = new Random(seed);
        for (int round = 0; round < 200; round++) {
            int n = random.nextInt(9);
            TokenStreamBuffer buffer = new TokenStreamBuffer(2);
            List<TokenStreamBuffer.Entry> entries = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                entries.add(buffer.register());
            }
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                order.add(i);
            }
            java.util.Collections.shuffle(order, random);
            List<Long> cut = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            boolean producerDone = false;
            for (int k = 0; k <= n; k++) {
                if (k < n) {
                    int i = order.get(k);
                    buffer.landed(entries.get(i), i, "int32");
                }
                producerDone = k == n;
                for (TokenStreamBuffer.Chunk c = buffer.poll(producerDone); c != null; c = buffer.poll(producerDone)) {
                    cut.addAll(c.uuids());
                    sizes.add(c.uuids().size());
                    assertThat(c.last()).isEqualTo(c.uuids().size() < 2);
                }
            }
            assertThat(cut).as("seed %d round %d", seed, round).containsExactlyElementsOf(
                    java.util.stream.LongStream.range(0, n).boxed().toList());
            assertThat(sizes.get(sizes.size() - 1)).isEqualTo(n % 2);
            assertThat(sizes.stream().filter(s -> s < 2).count()).as("exactly one final chunk").isEqualTo(1);
            assertThat(buffer.consumed()).isEqualTo(n);
            assertThat(buffer.poll(true)).isNull();
        }
    }

    @Test
    void theLeastRecentlyServedNodeGoesFirstAndBatchesRespectTheLimit() {
        Scheduler scheduler = new Scheduler();
        for (int i = 0; i < 5; i++) {
            scheduler.add(item("r" + i, "a"));
        }
        scheduler.add(item("r9", "b"));
        List<ReadyItem> first = scheduler.next(k -> 3);
        assertThat(first).extracting(i -> i.request().requestId).containsExactly("r0", "r1", "r2");
        List<ReadyItem> second = scheduler.next(k -> 3);
        assertThat(second).extracting(i -> i.node().node.name()).containsExactly("b");
        List<ReadyItem> third = scheduler.next(k -> 3);
        assertThat(third).extracting(i -> i.request().requestId).containsExactly("r3", "r4");
        assertThat(scheduler.next(k -> 3)).isEmpty();
        first.forEach(i -> assertThat(i.node().queued).isTrue());

        scheduler.add(item("gone", "a"));
        scheduler.removeRequest("gone");
        assertThat(scheduler.queued()).isZero();
    }

    @Test
    void tombstonesForgetTheOldestBeyondTheirCapacity() {
        Tombstones tombstones = new Tombstones(2);
        tombstones.add("a");
        tombstones.add("b");
        tombstones.add("c");
        assertThat(tombstones.contains("a")).isFalse();
        assertThat(tombstones.contains("b")).isTrue();
        assertThat(tombstones.contains("c")).isTrue();
        assertThat(tombstones.size()).isEqualTo(2);
    }

    private static ReadyItem item(String request, String node) {
        RequestState state = new RequestState(request, "m", Map.of());
        PartitionPass pass = new PartitionPass(new CurrentForwardPassInfo(request, "w", false, 0, 0, 1), List.of());
        NodeState n = new NodeState(new GraphNode(node, Set.of(), List.of(), false), null);
        return new ReadyItem(state, null, pass, n);
    }
}
