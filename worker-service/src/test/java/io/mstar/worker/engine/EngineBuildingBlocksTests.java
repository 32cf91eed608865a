package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphNode;
import io.mstar.model.CounterModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.counter.CounterHostKernels;
import io.mstar.worker.streaming.ChunkPolicy;
import io.mstar.worker.streaming.FixedChunkPolicy;
import io.mstar.worker.streaming.StreamChunk;

/** The engine's small parts on their own: stream chunking, scheduling order, tombstones. */
class EngineBuildingBlocksTests {

    /** The counter's detok stream as the engine builds it: the policy from the kernels, producer uuids as keys. */
    @Test
    void theCounterStreamCutsChunksOfTwoInRegistrationOrderWhateverOrderTokensLandIn() {
        long seed = Seeds.of("EngineBuildingBlocksTests");
        Random random = new Random(seed);
        ChunkPolicy policy = CounterHostKernels.kernels().chunkPolicy(CounterModel.TOKEN_STREAM);
        assertThat(policy).isEqualTo(new FixedChunkPolicy(CounterModel.CHUNK_SIZE));
        for (int round = 0; round < 200; round++) {
            int n = random.nextInt(9);
            ConsumedStream stream = new ConsumedStream(policy);
            for (long i = 0; i < n; i++) {
                stream.buffer.register(1000 + i);
            }
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                order.add(i);
            }
            Collections.shuffle(order, random);
            List<Long> cut = new ArrayList<>();
            List<Long> released = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            int finals = 0;
            for (int k = 0; k <= n; k++) {
                if (k < n) {
                    int i = order.get(k);
                    stream.landed(1000 + i, i, "int32");
                } else {
                    stream.buffer.producerDone();
                }
                for (Optional<StreamChunk<Long>> c = stream.buffer.poll(); c.isPresent(); c = stream.buffer.poll()) {
                    cut.addAll(c.get().tensors());
                    c.get().released().forEach(e -> released.add(e.tensor()));
                    sizes.add(c.get().size());
                    finals += c.get().isFinal() ? 1 : 0;
                    assertThat(c.get().isFinal()).as("seed %d round %d", seed, round).isEqualTo(k == n);
                }
            }
            List<Long> all = LongStream.range(0, n).boxed().toList();
            assertThat(cut).as("seed %d round %d", seed, round).containsExactlyElementsOf(all);
            assertThat(released).as("each token handed back once, in order").containsExactlyElementsOf(all);
            assertThat(sizes.get(sizes.size() - 1)).isEqualTo(n % 2);
            assertThat(finals).as("exactly one final chunk").isEqualTo(1);
            assertThat(stream.buffer.tokensConsumed()).isEqualTo(n);
            assertThat(stream.buffer.heldTensors()).isZero();
            assertThat(stream.buffer.poll()).isEmpty();
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
        WorkerRequest state = new WorkerRequest(request, "m", Map.of());
        PartitionPass pass = new PartitionPass(new CurrentForwardPassInfo(request, "w", false, 0, 0, 1), List.of());
        NodeState n = new NodeState(new GraphNode(node, Set.of(), List.of(), false), null);
        return new ReadyItem(state, null, pass, n);
    }
}
