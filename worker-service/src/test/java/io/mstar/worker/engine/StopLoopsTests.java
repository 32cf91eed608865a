package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.Loop;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.Parallel;
import io.mstar.graph.SpecialDestinations;
import io.mstar.messaging.EntityId;
import io.mstar.wire.StopLoops;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;

/**
 * A disaggregated loop (docs/architecture.md#loops-and-streaming): the body is {@code Parallel(a, b)} with {@code a} on
 * worker 0 and {@code b} on worker 1, each with a local loop-back, so each worker runs its own piece of one loop.
 * {@code a}'s finish must stop {@code b}'s piece through {@code StopLoops}; a stop applies once per loop instance. Both
 * kernels emit their state + 1 every iteration, so the emitted values count iterations.
 */
class StopLoopsTests extends ToyWorkers {

    static final String MODEL = "relay";
    static final String WALK = "run";
    static final String LOOP = "relay_loop";
    static final int MAX_ITERS = 8;
    /** step_metadata key: the iteration at which a's kernel raises finish. */
    static final String A_FINISH_AT = "a_finish_at";

    /** Runs on w1's step thread before b computes; a test uses it to time messages against b's iterations. */
    volatile Consumer<NodeCall> beforeB = call -> { };
    /**
     * The iteration of pass 0 that b last entered: a never runs ahead of b there, and a's finish waits for b to enter
     * the iteration after it, so the StopLoops always finds b in that one.
     */
    final java.util.concurrent.atomic.AtomicInteger bEntered = new java.util.concurrent.atomic.AtomicInteger(-1);

    @Override
    ModelGraph graph() {
        GraphNode a = new GraphNode("a", Set.of("xa"), List.of(new GraphEdge("a", "xa", List.of()),
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, "ya").outputModality("text").build()), false);
        GraphNode b = new GraphNode("b", Set.of("xb"), List.of(new GraphEdge("b", "xb", List.of()),
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, "yb").outputModality("text").build()), false);
        Loop loop = new Loop(new Parallel(List.of(a, b)), MAX_ITERS, List.of(), List.of(), LOOP);
        return new ModelGraph(MODEL, List.of(new GraphWalk(WALK, loop)));
    }

    @Override
    String deploymentYaml() {
        return """
                models:
                  - name: relay
                    node_groups:
                      - node_names: [a]
                        workers: [0]
                      - node_names: [b]
                        workers: [1]
                """;
    }

    @Override
    ModelKernels kernels() {
        return new ModelKernels(MODEL, Map.of("a", step("xa", "ya", call -> {
            String at = call.info().stepMetadata().get(A_FINISH_AT);
            boolean finish = at != null && Integer.parseInt(at) == iteration(call);
            if (call.info().fwdIndex() == 0) {
                // a finishing waits for b to be inside its next iteration: its StopLoops must not reach w1 before w1
                // took b's current one back, or that one would be the last
                int bAt = iteration(call) + (finish ? 1 : 0);
                awaitUntil(() -> bEntered.get() >= bAt);
            }
            return finish;
        }), "b", step("xb", "yb", call -> {
            if (call.info().fwdIndex() == 0) {
                bEntered.set(iteration(call));
            }
            beforeB.accept(call);
            return false;
        })));
    }

    private static NodeKernel step(String in, String out, Function<NodeCall, Boolean> finish) {
        return (device, batch) -> batch.stream().map(call -> {
            boolean done = finish.apply(call);
            int next = Int32Tensors.read(device, call.input(in))[0] + 1;
            return NodeResult.of(Map.of(in, Int32Tensors.write(device, new int[] {next}),
                    out, Int32Tensors.write(device, new int[] {next})), done);
        }).toList();
    }

    static void awaitUntil(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("test kernel gate timed out");
            }
            Thread.onSpinWait();
        }
    }

    static int iteration(NodeCall call) {
        return call.position().loopIndices().getOrDefault(LOOP, -1);
    }

    static ToyConductor.Pass pass(Integer aFinishAt) {
        return new ToyConductor.Pass(WALK, List.of(new ToyConductor.Input(ToyConductor.W0, "a", "xa", new int[] {0}),
                new ToyConductor.Input(ToyConductor.W1, "b", "xb", new int[] {100})),
                aFinishAt == null ? Map.of() : Map.of(A_FINISH_AT, aFinishAt.toString()));
    }

    static StopLoops stop(String id, int iteration, int fwd) {
        return new StopLoops(id, Set.of(LOOP), CounterConductor.DEFAULT,
                Map.of(LOOP, new NestedLoopIndices(List.of(LOOP), Map.of(LOOP, iteration), fwd)));
    }

    private boolean stopDeliveredToW1() {
        synchronized (broker.delivered) {
            return broker.delivered.stream().anyMatch(s -> s.to().equals(ToyConductor.W1.value())
                    && s.message() instanceof WorkerMessage m && m.body() instanceof StopLoops);
        }
    }

    @Test
    void aFinishOnOneWorkerStopsThePeersPieceAfterItsCurrentIteration() throws Exception {
        int k = 2;
        // a never runs ahead of b; b waits in iteration k+1 until a's StopLoops is queued on w1, and w1's loop, not
        // blocked by the step, handles it while that iteration runs.
        beforeB = call -> {
            if (iteration(call) == k + 1) {
                awaitUntil(this::stopDeliveredToW1);
            }
        };
        conductor.start("r-1", List.of(pass(k)));
        conductor.pumpUntilRemoved(TIMEOUT);

        ToyConductor.Run run = conductor.runs.get("r-1");
        assertThat(run.failure).isNull();
        assertThat(run.firsts("ya", 0)).containsExactly(1, 2, 3); // a: iterations 0..k, finished at k
        assertThat(run.firsts("yb", 0)).containsExactly(101, 102, 103, 104); // b: 0..k+1, not to MAX_ITERS
        List<StopLoops> toW1 = broker.sentTo(ToyConductor.W1.value(), StopLoops.class);
        assertThat(toW1).containsExactly(stop("r-1", k, 0));
        assertThat(broker.sentTo(ToyConductor.W0.value(), StopLoops.class)).as("b did not finish itself").isEmpty();
    }

    @Test
    void aStopAppliesOncePerLoopInstanceAndOnlyAStrictlyLaterOneAppliesAgain() throws Exception {
        String id = "r-2";
        beforeB = call -> {
            int fwd = call.info().fwdIndex();
            int i = iteration(call);
            if (fwd == 0 && i == 2) {
                awaitUntil(this::stopDeliveredToW1); // handled while iteration 2 runs
            } else if (fwd == 1 && i == 1) {
                // a's stop of pass 0 again, and one of pass 0 at another iteration: neither is later
                broker.fromConductor(ToyConductor.W1, WorkerMessage.of(stop(id, 1, 0)));
                broker.fromConductor(ToyConductor.W1, WorkerMessage.of(stop(id, 0, 0)));
            } else if (fwd == 1 && i == 2) {
                // a peer already through pass 2's loop; then a stop of pass 1 that is older than that one
                broker.fromConductor(ToyConductor.W1, WorkerMessage.of(stop(id, 5, 2)));
                broker.fromConductor(ToyConductor.W1, WorkerMessage.of(stop(id, 0, 1)));
            } else if (fwd == 3 && i == 1) {
                broker.fromConductor(ToyConductor.W1, WorkerMessage.of(stop(id, 6, 2))); // pass 2's, applied already
            } else if (fwd == 3 && i == 4) {
                broker.fromConductor(ToyConductor.W1, WorkerMessage.of(stop(id, 3, 3)));
            }
        };
        // pass 0: a finishes at iteration 1 and stops b; later passes: a runs to MAX_ITERS
        conductor.start(id, List.of(pass(1), pass(null), pass(null), pass(null)));
        conductor.pumpUntilRemoved(TIMEOUT);

        ToyConductor.Run run = conductor.runs.get(id);
        assertThat(run.failure).isNull();
        assertThat(run.firsts("ya", 0)).containsExactly(1, 2);
        assertThat(run.firsts("yb", 0)).containsExactly(101, 102, 103);
        for (int fwd = 1; fwd <= 3; fwd++) {
            assertThat(run.firsts("ya", fwd)).as("a in pass %d", fwd).hasSize(MAX_ITERS);
        }
        assertThat(run.firsts("yb", 1)).as("duplicate, earlier and future-instance stops leave pass 1 running")
                .hasSize(MAX_ITERS).startsWith(101, 102).endsWith(100 + MAX_ITERS);
        assertThat(run.firsts("yb", 2)).as("the stop recorded for pass 2 ends its loop after one iteration")
                .containsExactly(101);
        // the stop of pass 3 landed while iteration 4 was current: b ran 0..4
        assertThat(run.firsts("yb", 3)).as("a strictly later stop applies").containsExactly(101, 102, 103, 104, 105);
        assertThat(broker.sentTo(ToyConductor.W1.value(), StopLoops.class)).contains(stop(id, 1, 0));
    }
}
