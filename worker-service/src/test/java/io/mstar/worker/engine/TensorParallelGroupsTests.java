package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Topics;

class TensorParallelGroupsTests {

    private static final DeploymentConfig TP2 = DeploymentConfig.parse("""
            models:
              - name: toy-tts
                kv_cache: {page_size: 16, max_num_pages: 64}
                node_groups:
                  - node_names: [codec]
                    workers: [0]
                  - node_names: [lm]
                    workers: [1, 2, 3, 4]
                    tp_size: 2
            """, "TensorParallelGroupsTests");

    @Test
    void eachWorkerOfAGroupKnowsItsInstanceAndRank() {
        assertThat(TensorParallelGroups.of(TP2, EntityId.worker(0), "toy-tts")).isEmpty();
        assertThat(TensorParallelGroups.of(TP2, EntityId.worker(1), "toy-tts"))
                .contains(new TensorParallelGroups.Member("toy-tts", 1, 0, 0, 2));
        assertThat(TensorParallelGroups.of(TP2, EntityId.worker(4), "toy-tts"))
                .contains(new TensorParallelGroups.Member("toy-tts", 1, 1, 1, 2));
        TensorParallelGroups.Member rank1 = TensorParallelGroups.of(TP2, EntityId.worker(2), "toy-tts").orElseThrow();
        TensorParallelGroups.Member otherInstance = TensorParallelGroups.of(TP2, EntityId.worker(3), "toy-tts").orElseThrow();
        Topics topics = Topics.withDefaultPrefix();
        assertThat(rank1.collective(topics, Duration.ofSeconds(6)).path())
                .isEqualTo(TensorParallelGroups.of(TP2, EntityId.worker(1), "toy-tts").orElseThrow()
                        .collective(topics, Duration.ofSeconds(6)).path())
                .isNotEqualTo(otherInstance.collective(topics, Duration.ofSeconds(6)).path());
        assertThat(rank1.collectiveName(new Topics("other"))).isNotEqualTo(rank1.collectiveName(topics));
    }

    @Test
    void theToyTtsLmShardsOnEveryRank() {
        assertThatCode(() -> TensorParallelGroups.refuseUnsupported(TP2, EntityId.worker(2)))
                .doesNotThrowAnyException();
        assertThatCode(() -> TensorParallelGroups.refuseUnsupported(DeploymentConfig.loadDefault(), EntityId.worker(1)))
                .doesNotThrowAnyException();
    }

    @Test
    void rankZeroKnowsItsFollowersInRankOrderAndAFollowerNone() {
        assertThat(TensorParallelGroups.of(TP2, EntityId.worker(1), "toy-tts").orElseThrow().followers(TP2))
                .containsExactly(EntityId.worker(2));
        assertThat(TensorParallelGroups.of(TP2, EntityId.worker(3), "toy-tts").orElseThrow().followers(TP2))
                .containsExactly(EntityId.worker(4));
        assertThat(TensorParallelGroups.of(TP2, EntityId.worker(2), "toy-tts").orElseThrow().followers(TP2)).isEmpty();
    }

    @Test
    void aTpSizeThatDoesNotSplitTheLmRefusesToStartNamingTheKey() {
        DeploymentConfig three = DeploymentConfig.parse("""
                models:
                  - name: toy-tts
                    node_groups:
                      - node_names: [codec]
                        workers: [0]
                      - node_names: [lm]
                        workers: [1, 2, 3]
                        tp_size: 3
                """, "TensorParallelGroupsTests");
        assertThatThrownBy(() -> TensorParallelGroups.refuseUnsupported(three, EntityId.worker(1)))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("models[0].node_groups[1].tp_size")
                .hasMessageContaining("4 heads");
    }

    @Test
    void aNodeWithoutAShardedKernelRefusesToStartNamingTheKey() {
        DeploymentConfig counter = DeploymentConfig.parse("""
                models:
                  - name: counter
                    node_groups:
                      - node_names: [embed, offset, detok, count, step]
                        workers: [0, 1]
                        tp_size: 2
                """, "TensorParallelGroupsTests");
        assertThatThrownBy(() -> TensorParallelGroups.refuseUnsupported(counter, EntityId.worker(1)))
                .isInstanceOf(EngineException.class)
                .hasMessageContaining("models[0].node_groups[0].node_names");
    }
}
