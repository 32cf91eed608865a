package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.Loop;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.SpecialDestinations;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.NewRequest;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeResult;

/**
 * Loop rules on a one-node loop {@code L[inc]}: {@code x' = x + k}, {@code y = x'}; {@code x} loops back, {@code k}
 * enters from outside (re-ingested every iteration), the loop output is {@code x} of the last iteration and
 * {@code y} is accumulated, one emission per iteration.
 */
class LoopSemanticsTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    InProcessBroker broker;
    TestConductor data;
    TestWorker worker;
    List<WorkerGraph> graphs;

    @BeforeEach
    void start() {
        GraphNode inc = new GraphNode("inc", Set.of("x", "k"), List.of(new GraphEdge("inc", "x", List.of())), false);
        Loop loop = new Loop(inc, 3,
                List.of(GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, "x").outputModality("text").build()),
                List.of(GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, "y").outputModality("text").build()), "L");
        ModelGraph model = new ModelGraph("acc", List.of(new GraphWalk("w", loop)));
        graphs = WorkerGraphSplit.split(List.of(new ModelConfig("acc", Optional.empty(),
                List.of(new NodeGroupConfig(List.of("inc"), List.of(0), 1, List.of())))), Map.of("acc", model));
        ModelKernels kernels = new ModelKernels("acc", Map.of("inc", (device, batch) -> batch.stream().map(call -> {
            int x = Int32Tensors.read(device, call.input("x"))[0];
            int k = Int32Tensors.read(device, call.input("k"))[0];
            return NodeResult.of(Map.of("x", Int32Tensors.write(device, new int[] {x + k}),
                    "y", Int32Tensors.write(device, new int[] {x + k})));
        }).toList()));
        broker = new InProcessBroker();
        data = new TestConductor(dir);
        worker = new TestWorker(0, dir, broker, new KernelCatalog(List.of(kernels)), graphs);
    }

    @AfterEach
    void everythingIsFreed() {
        try {
            EngineSnapshot s = worker.snapshot();
            assertThat(s.requests()).isZero();
            assertThat(s.tensors().liveTensors()).isZero();
            assertThat(worker.deviceBytes()).isZero();
            assertThat(data.store.liveTensorCount()).isZero();
        } finally {
            worker.close();
            data.close();
        }
    }

    private record Emitted(String signal, int value, NestedLoopIndices at) {
    }

    private List<Emitted> run(String id, Map<String, Integer> dynamic) throws Exception {
        CurrentForwardPassInfo info = new CurrentForwardPassInfo(id, "w", false, 3, 0, 10, null, null, null, null, null,
                dynamic);
        TensorPointerInfo x = data.input(id, new int[] {1});
        TensorPointerInfo k = data.input(id, new int[] {10});
        broker.fromConductor(worker.id, WorkerMessage.of(new NewRequest(id, List.of(graphs.get(0).id()),
                Map.of(graphs.get(0).id(), List.of(worker.id.value())),
                List.of(new GraphEdge("inc", "x", List.of(x)), new GraphEdge("inc", "k", List.of(k))), info)));
        List<Emitted> emitted = new ArrayList<>();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        boolean removed = false;
        while (!removed) {
            assertThat(System.nanoTime()).as("timed out; emitted %s", emitted).isLessThan(deadline);
            ConductorMessage m = broker.conductor.poll(50, TimeUnit.MILLISECONDS);
            if (m == null) {
                continue;
            }
            if (m.body() instanceof ResultTensors r) {
                emitted.add(new Emitted(r.graphEdge().name(), data.outputInts(r)[0], r.loopIndices()));
                TestConductorLoop.acknowledge(broker, r);
            } else if (m.body() instanceof WorkerGraphsDone) {
                broker.fromConductor(worker.id, WorkerMessage.of(new DrainRequest(id)));
            } else if (m.body() instanceof ReadsDone) {
                broker.fromConductor(worker.id, WorkerMessage.of(new RemoveRequest(id)));
                data.removeRequest(id);
                removed = true;
            }
        }
        return emitted;
    }

    @Test
    void externalInputsReturnEachIterationLoopOutputsCarryTheLastAndAccumulatedOnesEveryIteration() throws Exception {
        List<Emitted> emitted = run("loop-1", Map.of());

        assertThat(emitted.stream().filter(e -> e.signal().equals("y")).map(Emitted::value)).containsExactly(11, 21, 31);
        assertThat(emitted.stream().filter(e -> e.signal().equals("y")).map(e -> e.at().loopIndices().get("L")))
                .containsExactly(0, 1, 2);
        assertThat(emitted.stream().filter(e -> e.signal().equals("x")).map(Emitted::value)).containsExactly(31);
        Emitted x = emitted.stream().filter(e -> e.signal().equals("x")).findFirst().orElseThrow();
        assertThat(x.at().loopIndices()).containsEntry("L", 2);
        assertThat(x.at().wgFwdPassIdx()).isEqualTo(3);
    }

    @Test
    void aDynamicIterationCountBelowMaxItersShortensTheLoop() throws Exception {
        List<Emitted> emitted = run("loop-2", Map.of("L", 2));

        assertThat(emitted.stream().filter(e -> e.signal().equals("y")).map(Emitted::value)).containsExactly(11, 21);
        assertThat(emitted.stream().filter(e -> e.signal().equals("x")).map(Emitted::value)).containsExactly(21);
    }
}
