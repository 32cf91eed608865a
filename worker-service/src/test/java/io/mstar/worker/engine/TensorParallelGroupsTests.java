package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;

class TensorParallelGroupsTests {

    private static final DeploymentConfig TP2 = DeploymentConfig.parse("""
            models:
              - name: toy-tts
                kv_cache: {page_size: 16, max_num_pages: 64}
                node_groups:
                  - node_names: [codec]
                    workers: [0]
                  - node_names: [lm]
                    workers: [1, 2]
                    tp_size: 2
            """, "TensorParallelGroupsTests");

    @Test
    void aRankOfALockstepGroupRefusesToStartNamingTheKey() {
        assertThatThrownBy(() -> TensorParallelGroups.refuseLockstep(TP2, EntityId.worker(2)))
                .isInstanceOfSatisfying(EngineException.class,
                        e -> assertThat(e.reason()).isEqualTo(EngineException.Reason.UNSUPPORTED_GRAPH))
                .hasMessageContaining("models[0].node_groups[1].tp_size: 2")
                .hasMessageContaining("worker-2");
    }

    @Test
    void aWorkerOutsideEveryLockstepGroupStarts() {
        assertThatCode(() -> TensorParallelGroups.refuseLockstep(TP2, EntityId.worker(0))).doesNotThrowAnyException();
        assertThatCode(() -> TensorParallelGroups.refuseLockstep(DeploymentConfig.loadDefault(), EntityId.worker(1)))
                .doesNotThrowAnyException();
    }
}
