package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.EntityId;
import io.mstar.model.CounterModel;
import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.minilm.MiniLmCudaSettings;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A worker builds minilm-embed's kernels (and so reads its 90 MB of weights) only when the deployment places a minilm
 * node on it; the kernel catalog closes them with itself.
 */
class MiniLmPlacementTests {

    @Test
    void onlyTheWorkerTheDeploymentNamesLoadsTheModel() {
        DeploymentConfig config = DeploymentConfig.loadDefault();
        try (HostDevice device = new HostDevice("host", 1 << 20)) {
            assertThat(WorkerDevices.miniLmKernels(device, config, EntityId.worker(1), MiniLmCudaSettings.defaults())).isEmpty();
            Optional<ModelKernels> kernels = WorkerDevices.miniLmKernels(device, config, EntityId.worker(0), MiniLmCudaSettings.defaults());
            assertThat(kernels).isPresent();
            assertThat(kernels.get().model()).isEqualTo(MiniLmModel.NAME);
            assertThat(kernels.get().kernels()).containsOnlyKeys(MiniLmModel.ENCODE);

            KernelCatalog catalog = new KernelCatalog(List.of(WorkerDevices.counterKernels(device), kernels.get()));
            assertThat(catalog.model(MiniLmModel.NAME)).isSameAs(kernels.get());
            catalog.close();
            assertThatThrownBy(() -> catalog.model(CounterModel.NAME)).isInstanceOf(KernelException.class);
        }
    }

    @Test
    void aDeploymentWithoutTheModelLoadsItNowhere() {
        DeploymentConfig config = DeploymentConfig.parse("""
                models:
                  - name: counter
                    node_groups:
                      - node_names: [embed, offset, detok, count, step]
                        workers: [0]
                """, "counter only");
        try (HostDevice device = new HostDevice("host", 1 << 20)) {
            assertThat(WorkerDevices.miniLmKernels(device, config, EntityId.worker(0), MiniLmCudaSettings.defaults())).isEmpty();
        }
    }
}
