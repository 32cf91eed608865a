package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A kernel writing to an unmapped address poisons the context (sticky CUDA_ERROR_ILLEGAL_ADDRESS): FATAL,
 * unhealthy, the listener told once. Ordered after every other GPU test class
 * ({@code junit.jupiter.testclass.order.default=org.junit.jupiter.api.ClassOrderer$OrderAnnotation}), because
 * nothing else can run on that GPU in this process afterwards.
 */
@Tag("gpu")
@Order(Integer.MAX_VALUE)
class CudaFatalErrorGpuTests {

    @Test
    void anIllegalAddressIsFatalAndTurnsTheDeviceUnhealthy() {
        assumeTrue(CudaKernels.available(), "built without nvcc: no faulting kernel");
        List<DeviceException> heard = new CopyOnWriteArrayList<>();
        CudaDevice device = new CudaDevice(0);
        device.addFatalListener(heard::add);
        CudaKernels kernels = new CudaKernels(device);
        var buffer = device.allocate(4096);
        assertThat(device.isHealthy()).isTrue();

        kernels.poke(0x10, 42);

        assertThatThrownBy(device::synchronize)
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.FATAL);
                    assertThat(e.getMessage()).contains("CUDA_ERROR_ILLEGAL_ADDRESS");
                });
        assertThat(device.isHealthy()).isFalse();
        assertThat(heard).hasSize(1);
        assertThatThrownBy(() -> device.allocate(16))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.FATAL));
        device.free(buffer);
        device.close();
        assertThat(heard).hasSize(1);
    }
}
