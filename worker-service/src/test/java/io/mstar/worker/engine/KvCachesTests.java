package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;
import io.mstar.worker.kv.PageAllocatorStats;
import io.mstar.wire.OffloadDelta;
import io.mstar.wire.WorkerErrorType;

/** {@link KvCaches} on a real host device: reservation per call, the request that does not fit left out, release once. */
class KvCachesTests {

    final HostDevice device = new HostDevice("host", 1 << 20);
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final KvCaches caches = new KvCaches(Map.of("m", new KvCacheConfig(2, 3)), registry);
    final List<Tensor> inputs = new ArrayList<>();

    /** Records what it was given; answers no outputs. */
    static final class Recording implements KvCacheKernel {
        final List<List<String>> batches = new ArrayList<>();
        final List<KvStep> steps = new ArrayList<>();

        @Override
        public long bytesPerToken() {
            return 8;
        }

        @Override
        public int tokensToAppend(NodeCall call) {
            return (int) call.input("tok").elementCount();
        }

        @Override
        public List<NodeResult> forward(Device device, List<NodeCall> batch, List<KvStep> kv) {
            batches.add(batch.stream().map(NodeCall::requestId).toList());
            steps.addAll(kv);
            return batch.stream().map(c -> NodeResult.of(Map.of())).toList();
        }
    }

    NodeCall call(String id, int tokens) {
        return call(id, tokens, 0);
    }

    NodeCall call(String id, int tokens, int maxTokens) {
        Tensor tok = Int32Tensors.write(device, new int[tokens]);
        inputs.add(tok);
        return new NodeCall(id, Map.of("tok", tok), new CurrentForwardPassInfo(id, "w", false, 0, 5L, maxTokens),
                new NestedLoopIndices(List.of(), Map.of(), 0));
    }

    /** The requests a step holds (never victims) in a test; none unless it adds some. */
    final java.util.Set<String> busy = new java.util.HashSet<>();
    /** The calls the last {@link #forward} deferred for pages. */
    final List<String> deferred = new ArrayList<>();

    /** What a step does with a KV node: reserve on the loop, run the calls admitted, one result per call. */
    List<NodeResult> forward(KvCaches caches, String model, String node, KvCacheKernel kernel, Device device,
            List<NodeCall> calls) {
        int[] tokens = calls.stream().mapToInt(kernel::tokensToAppend).toArray();
        NodeResult[] results = new NodeResult[calls.size()];
        boolean[] waits = new boolean[calls.size()];
        List<KvStep> steps = caches.reserve(model, node, kernel, device, calls, tokens, results, waits, busy::contains);
        List<NodeCall> run = new ArrayList<>();
        List<KvStep> kv = new ArrayList<>();
        List<Integer> at = new ArrayList<>();
        deferred.clear();
        for (int i = 0; i < calls.size(); i++) {
            if (waits[i]) {
                deferred.add(calls.get(i).requestId());
            } else if (results[i] == null) {
                run.add(calls.get(i));
                kv.add(steps.get(i));
                at.add(i);
            }
        }
        if (!run.isEmpty()) {
            List<NodeResult> out = kernel.forward(device, run, kv);
            for (int j = 0; j < out.size(); j++) {
                results[at.get(j)] = out.get(j);
            }
        }
        return java.util.Arrays.asList(results);
    }

    @Test
    void aRolledBackReservationLeavesTheRequestsPagesAsTheyWere() {
        Recording kernel = new Recording();
        forward(caches, "m", "lm", kernel, device, List.of(call("r1", 2))); // one full page of 2
        NodeResult[] refused = new NodeResult[1];
        List<KvStep> next = caches.reserveSpeculated("m", "lm", kernel, device, List.of(call("r1", 1)), new int[] {1},
                false);
        assertThat(next.get(0)).as("a speculated step told to take no free page").isNull();
        assertThat(caches.reserveSpeculated("m", "lm", kernel, device, List.of(call("new", 1)), new int[] {1}, true))
                .as("nor one for a request new here").containsOnlyNulls();
        next = caches.reserve("m", "lm", kernel, device, List.of(call("r1", 1)), new int[] {1}, refused,
                new boolean[1], busy::contains);
        assertThat(caches.stats().get("m/lm").pagesInUse()).isEqualTo(2);

        caches.rollback("m", "lm", next.get(0));

        assertThat(caches.stats().get("m/lm").pagesInUse()).isEqualTo(1);
        List<KvStep> again = caches.reserve("m", "lm", kernel, device, List.of(call("r1", 1)), new int[] {1}, refused,
                new boolean[1], busy::contains);
        assertThat(again.get(0).firstPosition()).as("the taken-back position is reserved again").isEqualTo(2);
        caches.rollback("m", "lm", again.get(0));
        caches.rollback("m", "lm", again.get(0)); // a second rollback finds the sequence moved on: nothing changes
        assertThat(caches.stats().get("m/lm").pagesInUse()).isEqualTo(1);
        caches.release("r1");
        assertThat(caches.stats().get("m/lm").pagesInUse()).isZero();
    }

    @Test
    void aSpeculatedReservationTakesFreePagesOnlyWhenAllowedAndGivesThemBackOnRollback() {
        Recording kernel = new Recording();
        forward(caches, "m", "lm", kernel, device, List.of(call("r1", 2))); // one full page of 2
        List<KvStep> next = caches.reserveSpeculated("m", "lm", kernel, device, List.of(call("r1", 1)), new int[] {1},
                true);
        assertThat(next.get(0).firstPosition()).isEqualTo(2);
        assertThat(caches.stats().get("m/lm").pagesInUse()).as("a free page taken").isEqualTo(2);
        forward(caches, "m", "lm", kernel, device, List.of(call("r2", 2))); // the pool's last page
        assertThat(caches.reserveSpeculated("m", "lm", kernel, device, List.of(call("r2", 1)), new int[] {1}, true))
                .as("no page free, and no victim moved for one").containsOnlyNulls();

        caches.rollback("m", "lm", next.get(0));

        assertThat(caches.stats().get("m/lm").pagesInUse()).as("and given back").isEqualTo(2);
        caches.release("r2");
        caches.release("r1");
        assertThat(caches.stats().get("m/lm").pagesInUse()).isZero();
    }

    @AfterEach
    void freed() {
        inputs.forEach(t -> device.free(t.buffer()));
        caches.close();
        assertThat(device.stats().bytesInUse()).isZero();
        device.close();
    }

    @Test
    void aRequestThatCanNeverFitFailsAtOnceWithTheNumbersAndTheOthersRun() {
        Recording kernel = new Recording();
        // 3 pages of 2 tokens: r2's 2 tokens plus max_tokens 5 need 4 pages, more than the pool has
        List<NodeResult> results = forward(caches, "m", "lm", kernel, device,
                List.of(call("r1", 2), call("r2", 2, 5), call("r3", 2)));

        assertThat(results.get(0).failed()).isFalse();
        assertThat(results.get(1).errorType()).isEqualTo(WorkerErrorType.KV_CAPACITY_EXCEEDED);
        assertThat(results.get(1).error()).contains("7 KV positions", "4 pages of 2", "has 3 pages");
        assertThat(results.get(2).failed()).isFalse();
        assertThat(kernel.batches).containsExactly(List.of("r1", "r3"));
        assertThat(kernel.steps).extracting(KvStep::firstPosition, KvStep::count, KvStep::seed)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(0, 2, 5L), org.assertj.core.groups.Tuple.tuple(0, 2, 5L));
        assertThat(kernel.steps.get(0).slots().get(1).page()).isNotEqualTo(kernel.steps.get(1).slots().get(0).page());
        assertThat(caches.stats().get("m/lm").pagesAllocated()).as("r2 took no page").isEqualTo(2);
        for (String id : List.of("r1", "r2", "r3", "r1")) {
            caches.release(id); // a second release finds nothing: never a double free
        }
        assertThat(caches.stats().get("m/lm").pagesFreed()).isEqualTo(2);
    }

    @Test
    void aCallShortOfPagesOffloadsTheLeastRecentlyRunAndWaitsWhenNoneCanGo() {
        Recording kernel = new Recording();
        forward(caches, "m", "lm", kernel, device, List.of(call("old", 2)));
        forward(caches, "m", "lm", kernel, device, List.of(call("busy", 2)));
        forward(caches, "m", "lm", kernel, device, List.of(call("new", 2))); // the pool is full
        busy.add("busy");

        // new's next token needs a page: old ran least recently and no step holds it
        forward(caches, "m", "lm", kernel, device, List.of(call("new", 1)));
        assertThat(deferred).isEmpty();
        assertThat(caches.journal("m", "lm").moves()).containsExactly(new OffloadDelta.Move("old", true));
        assertThat(registry.get(KvCaches.KV_PAGES).tags("node", "lm", "state", "offloaded").gauge().value()).isEqualTo(1);
        assertThat(registry.get(KvCaches.KV_MOVES).tags("move", "offload").functionCounter().count()).isEqualTo(1);

        // old comes back only when its page fits: new runs (admitted, never a victim of its own step) and busy is held
        forward(caches, "m", "lm", kernel, device, List.of(call("new", 1), call("old", 1)));
        assertThat(deferred).containsExactly("old");
        caches.release("new");
        forward(caches, "m", "lm", kernel, device, List.of(call("old", 1)));
        assertThat(deferred).isEmpty();
        assertThat(caches.journal("m", "lm").moves()).containsExactly(new OffloadDelta.Move("old", true),
                new OffloadDelta.Move("old", false));
        assertThat(kernel.steps.get(kernel.steps.size() - 1).firstPosition()).as("old went on where it was").isEqualTo(2);
        assertThat(caches.hostStats().get("m/lm").pagesInUse()).isZero();
        caches.release("old");
        caches.release("busy");
        assertThat(caches.requestsHoldingPages()).isZero();
    }

    @Test
    void twoModelsWithANodeOfTheSameNameReportTheirOwnPages() {
        KvCaches two = new KvCaches(Map.of("m", new KvCacheConfig(2, 3), "n", new KvCacheConfig(2, 5)), registry);
        try {
            forward(two, "m", "lm", new Recording(), device, List.of(call("r1", 2)));
            forward(two, "n", "lm", new Recording(), device, List.of(call("r2", 4)));

            assertThat(registry.get(KvCaches.KV_PAGES).tags("model", "m", "node", "lm", "state", "used").gauge().value())
                    .isEqualTo(1);
            assertThat(registry.get(KvCaches.KV_PAGES).tags("model", "n", "node", "lm", "state", "used").gauge().value())
                    .isEqualTo(2);
            assertThat(registry.get(KvCaches.KV_PAGES).tags("model", "n", "node", "lm", "state", "free").gauge().value())
                    .isEqualTo(3);
            // The pools are device memory the worker holds for its life; leak checks subtract exactly this.
            double pools = registry.get(KvCaches.KV_POOL).gauges().stream().mapToDouble(g -> g.value()).sum();
            assertThat(pools).isEqualTo((double) two.poolBytes()).isEqualTo(2 * 3 * 8.0 + 2 * 5 * 8.0);
        } finally {
            two.release("r1");
            two.release("r2");
            two.close();
        }
    }

    @Test
    void aModelWithoutKvCacheSettingsCannotRunAKvNode() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> forward(caches, "other", "lm", new Recording(), device,
                List.of(call("r1", 1)))).isInstanceOf(EngineException.class).hasMessageContaining("kv_cache");
    }
}
