package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphWalk;
import io.mstar.graph.ModelGraph;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;

/**
 * Which steps the pipeline speculates (docs/worker-runtime.md#speculation), on the KV toy model of
 * {@link KvCacheEngineTests} (pages of 4 positions), with its walk twice (a second key for the scheduler), and
 * steps of 20 milliseconds, so that the loop builds the speculated step before the running one completes however late
 * a busy machine runs it. The kernel records each step's requests.
 */
class SpeculationSchedulingTests extends ToyLmWorkers {

    final List<List<String>> steps = Collections.synchronizedList(new ArrayList<>());

    static final String OTHER_WALK = "generate_again";

    @Override
    ModelGraph graph() {
        ModelGraph one = KvCacheEngineTests.toyLm();
        GraphWalk walk = one.walks().get(0);
        return new ModelGraph(one.modelName(), List.of(walk, new GraphWalk(OTHER_WALK, walk.root())));
    }

    @Override
    EngineProperties engineSettings() {
        return EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON);
    }

    @Override
    ModelKernels kernels() {
        return new ModelKernels(KvCacheEngineTests.MODEL, Map.of(KvCacheEngineTests.LM,
                KvCacheEngineTests.ToyLm.pausing(20_000_000, batch -> steps.add(
                        batch.stream().map(NodeCall::requestId).toList()))));
    }

    @Test
    void aRequestCrossingIntoANewPageStaysInTheChainOfSpeculatedSteps() throws Exception {
        // positions 0..15: the steps feeding positions 4, 8 and 12 each take a free page
        KvCacheEngineTests.Req r = new KvCacheEngineTests.Req("r", new int[] {3}, 16, 7L, null);
        conductor.start(r.id(), List.of(r.pass()));
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(conductor.runs.get("r").firsts("out", 0)).isEqualTo(r.expected());
        long speculated = w0.speculation()[0];
        // every step but the first is speculated on the one before; a page crossing used to break the chain
        assertThat(speculated).as("speculated steps of %d", steps.size()).isGreaterThanOrEqualTo(steps.size() - 2L);
    }

    @Test
    void aRequestNewHereIsNotKeptWaitingBehindAChainOfSpeculatedSteps() throws Exception {
        KvCacheEngineTests.Req first = new KvCacheEngineTests.Req("first", new int[] {3}, 16, 7L, null);
        KvCacheEngineTests.Req late = new KvCacheEngineTests.Req("late", new int[] {5}, 5, 8L, null);
        conductor.start(first.id(), List.of(first.pass()));
        conductor.pumpUntil(() -> conductor.runs.get("first").firsts("out", 0).size() >= 2, TIMEOUT);
        conductor.start(late.id(), List.of(late.pass()));
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(conductor.runs.get("first").firsts("out", 0)).isEqualTo(first.expected());
        assertThat(conductor.runs.get("late").firsts("out", 0)).isEqualTo(late.expected());
        List<List<String>> all = List.copyOf(steps);
        int lateLast = lastWith(all, "late");
        int firstLast = lastWith(all, "first");
        // a new request takes pages, which only an eager step reserves: the chain ends for it within a step
        assertThat(lateLast).as("late's last step comes before first's: %s", all).isLessThan(firstLast);
    }

    @Test
    void aRequestReadyForAnotherWalkEndsTheChainOfSpeculatedSteps() throws Exception {
        KvCacheEngineTests.Req first = new KvCacheEngineTests.Req("first", new int[] {3}, 16, 7L, null);
        KvCacheEngineTests.Req other = new KvCacheEngineTests.Req("other", new int[] {5}, 5, 8L, null);
        conductor.start(first.id(), List.of(first.pass()));
        conductor.pumpUntil(() -> conductor.runs.get("first").firsts("out", 0).size() >= 2, TIMEOUT);
        ToyConductor.Pass pass = other.pass();
        conductor.start(other.id(), List.of(new ToyConductor.Pass(OTHER_WALK, pass.inputs(), pass.stepMetadata(),
                pass.sampling(), pass.seed())));
        conductor.pumpUntilRemoved(TIMEOUT);

        assertThat(conductor.runs.get("first").firsts("out", 0)).isEqualTo(first.expected());
        assertThat(conductor.runs.get("other").firsts("out", 0)).isEqualTo(other.expected());
        List<List<String>> all = List.copyOf(steps);
        // the scheduler's least recently served key goes next once the chain ends
        assertThat(lastWith(all, "other")).as("other's last step comes before first's: %s", all)
                .isLessThan(lastWith(all, "first"));
    }

    private static int lastWith(List<List<String>> steps, String id) {
        for (int i = steps.size() - 1; i >= 0; i--) {
            if (steps.get(i).contains(id)) {
                return i;
            }
        }
        throw new AssertionError(id + " ran in no step: " + steps);
    }
}
