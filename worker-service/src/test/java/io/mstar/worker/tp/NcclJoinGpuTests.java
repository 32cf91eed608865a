package io.mstar.worker.tp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.NcclCollective;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.cuda.CudaDevice;

/**
 * A GPU rank's NCCL communicator joined through {@link NcclJoin} inside {@link RejoiningCollective}, on GPU 0: a group
 * of one (NCCL puts one rank on a GPU; two ranks need two GPUs), so rank 0 makes the unique id and sends it to nobody.
 * The first call joins and checks the setup through NCCL on the device, an abort ends the communicator, and the next
 * call joins a new one. The hand-over to followers: {@link NcclJoinTests}. Fails, rather than skips, without NCCL.
 */
@Tag("gpu")
class NcclJoinGpuTests {

    @Test
    void aGroupOfOneJoinsThroughNcclAndJoinsANewCommunicatorAfterAnAbort() {
        NcclCollective.unavailableReason().ifPresent(reason -> {
            throw new IllegalStateException(reason);
        });
        try (CudaDevice gpu = new CudaDevice(0)) {
            NcclJoin join = new NcclJoin("mstar.toy-tts.g1.i0", gpu, 0, 1, Duration.ofSeconds(20), List.of(),
                    (worker, message) -> {
                        throw new AssertionError("a group of one has no follower to send to: " + worker);
                    }, new NcclBootstraps(Set.of()));
            DeviceBuffer buffer = gpu.allocate(2 * Float.BYTES);
            int[] joined = {0};
            try (RejoiningCollective rank = new RejoiningCollective(0, 1, join, gpu, "setup", () -> joined[0]++)) {
                assertThat(sum(rank, gpu, buffer, 1.5f)).isEqualTo(1.5f);
                assertThat(rank.joins()).isEqualTo(1);
                rank.abort();
                assertThat(sum(rank, gpu, buffer, 2.5f)).as("a new communicator").isEqualTo(2.5f);
                assertThat(rank.joins()).isEqualTo(2);
                assertThat(joined[0]).as("joins told").isEqualTo(2);
            } finally {
                gpu.free(buffer);
            }
            assertThatThrownBy(() -> new NcclJoin("g", gpu, 0, 2, Duration.ofSeconds(1), List.of(), (w, m) -> { },
                    new NcclBootstraps(Set.of()))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("needs 1 followers");
            assertThat(gpu.stats().bytesInUse()).isZero();
        }
    }

    private static float sum(RejoiningCollective rank, CudaDevice gpu, DeviceBuffer buffer, float value) {
        ByteBuffer host = ByteBuffer.allocateDirect(Float.BYTES).order(ByteOrder.LITTLE_ENDIAN).putFloat(0, value);
        gpu.copyFromHost(host, buffer, Float.BYTES);
        try {
            rank.allReduceSum(buffer, Float.BYTES, 1);
        } catch (CollectiveException e) {
            throw new AssertionError("the call after the abort joins anew, it does not fail: " + e, e);
        }
        gpu.copyToHost(buffer, Float.BYTES, host);
        return host.getFloat(0);
    }
}
