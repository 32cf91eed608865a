package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.mstar.conductor.output.Chunk;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.model.ToyTtsModel;
import io.mstar.wire.InputSignals;
import io.mstar.wire.NewRequest;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerGraphsDone;

/**
 * The conductor's side of tensor parallelism (docs/tensor-parallelism.md#removal-relay): toy-tts with its {@code lm}
 * on a group of two workers. A pass of the group ends once both ranks reported; token counts are rank 0's alone;
 * every rank's persisted {@code state} is kept, and each rank gets back its own in the next pass and has its own
 * unpersisted.
 */
class TensorParallelLifecycleTests {

    private static final EntityId W1 = EntityId.worker(1);
    private static final EntityId W2 = EntityId.worker(2);

    private ConductorHarness h;

    @BeforeEach
    void start() throws Exception {
        h = new ConductorHarness(DeploymentConfig.parse("""
                models:
                  - name: toy-tts
                    kv_cache: {page_size: 16, max_num_pages: 64}
                    node_groups:
                      - node_names: [codec]
                        workers: [0]
                      - node_names: [lm]
                        workers: [1, 2]
                        tp_size: 2
                """, "TensorParallelLifecycleTests"), Duration.ofSeconds(30), Duration.ofSeconds(30));
        h.setUpWorkers();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    @Test
    void aPassEndsWhenEveryRankReportedAndEachRankGetsItsOwnStateBack() {
        byte[] prompt = "hi".getBytes(StandardCharsets.UTF_8);
        h.submit(new Submission("r-tp", ToyTtsModel.NAME, Map.of(ToyTtsModel.TEXT_INPUT, new Submission.InputTensor(
                ToyTtsModel.INPUT_DTYPE, List.of((long) prompt.length), prompt)), 5, null, Map.of(), null, null),
                new CopyOnWriteArrayList<Chunk>());
        int prefill = h.wg(ToyTtsModel.PREFILL, ToyTtsModel.LM);
        int decode = h.wg(ToyTtsModel.DECODE, ToyTtsModel.LM);
        h.awaitSent(NewRequest.class, 3, s -> true);
        assertThat(h.sentOf(NewRequest.class, s -> s.worker().equals(W1) || s.worker().equals(W2)))
                .as("both ranks get the prompt").hasSize(2)
                .allSatisfy(s -> assertThat(((NewRequest) s.body()).initialInputs()).hasSize(1));

        TensorPointerInfo s1 = h.workerTensor(W1.value(), 'i', 0);
        TensorPointerInfo s2 = h.workerTensor(W2.value(), 'i', 0);
        h.deliver(W1, WorkerGraphsDone.builder("r-tp", List.of(prefill), true)
                .persistSignals(Map.of(ToyTtsModel.STATE, List.of(s1))).partitionName(ToyTtsModel.LM_PARTITION).build());
        h.awaitSent(NewRequest.class, 3, s -> true);
        assertThat(h.sentOf(InputSignals.class, s -> true)).as("rank 1 has not reported yet").isEmpty();
        h.deliver(W2, WorkerGraphsDone.builder("r-tp", List.of(prefill), false)
                .persistSignals(Map.of(ToyTtsModel.STATE, List.of(s2))).partitionName(ToyTtsModel.LM_PARTITION).build());
        h.awaitSent(InputSignals.class, 2, s -> true);
        assertThat(stateSentTo(W1)).containsExactly(s1);
        assertThat(stateSentTo(W2)).containsExactly(s2);

        // 3 tokens: rank 0's count; rank 1's is the same tokens again and must not count (5 would end the request)
        TensorPointerInfo t1 = h.workerTensor(W1.value(), 'x', 3);
        TensorPointerInfo t2 = h.workerTensor(W2.value(), 'x', 3);
        h.deliver(W1, WorkerGraphsDone.builder("r-tp", List.of(decode), true)
                .persistSignals(Map.of(ToyTtsModel.STATE, List.of(t1))).newTokenCounts(Map.of(ToyTtsModel.TEXT, 3))
                .partitionName(ToyTtsModel.LM_PARTITION).build());
        h.deliver(W2, WorkerGraphsDone.builder("r-tp", List.of(decode), false)
                .persistSignals(Map.of(ToyTtsModel.STATE, List.of(t2))).newTokenCounts(Map.of(ToyTtsModel.TEXT, 3))
                .partitionName(ToyTtsModel.LM_PARTITION).build());
        h.awaitSent(InputSignals.class, 4, s -> true);
        assertThat(stateSentTo(W1)).as("another decode pass: 3 of 5 tokens").containsExactly(s1, t1);
        assertThat(stateSentTo(W2)).containsExactly(s2, t2);
        h.awaitSent(UnpersistTensors.class, 2, s -> true);
        assertThat(unpersisted(W1)).containsEntry(s1.uuid(), 1).doesNotContainKey(s2.uuid());
        assertThat(unpersisted(W2)).containsEntry(s2.uuid(), 1).doesNotContainKey(s1.uuid());
    }

    private List<TensorPointerInfo> stateSentTo(EntityId worker) {
        return h.sentOf(InputSignals.class, s -> s.worker().equals(worker)).stream()
                .flatMap(s -> ((InputSignals) s.body()).inputs().stream())
                .filter(e -> e.name().equals(ToyTtsModel.STATE))
                .map(GraphEdge::tensorInfo)
                .peek(list -> assertThat(list).as("one state per rank").hasSize(1))
                .map(list -> list.get(0)).toList();
    }

    private Map<Long, Integer> unpersisted(EntityId worker) {
        Map<Long, Integer> all = new java.util.HashMap<>();
        h.sentOf(UnpersistTensors.class, s -> s.worker().equals(worker))
                .forEach(s -> all.putAll(((UnpersistTensors) s.body()).uuidToRefCount()));
        return all;
    }
}
