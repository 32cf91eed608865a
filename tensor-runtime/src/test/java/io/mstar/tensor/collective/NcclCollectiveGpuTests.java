package io.mstar.tensor.collective;

import static io.mstar.tensor.collective.SharedMemoryCollectiveTests.failureOf;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.collective.CollectiveException.Reason;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;

/**
 * NCCL on one GPU: a communicator of one rank, where every collective is an identity that can be checked byte for
 * byte, issued on the device's stream alongside JCuda's copies; abort; a join that no second rank answers, which must
 * time out within the bound; bad arguments. Needs libnccl.so.2 on the library path and {@code NCCL_NVLS_ENABLE=0}
 * (bin/gpu-tests sets both).
 */
@Tag("gpu")
class NcclCollectiveGpuTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private CudaDevice device;
    private long baseline;

    @BeforeEach
    void open() {
        assertThat(NcclCollective.unavailableReason()).isEmpty();
        device = new CudaDevice(0);
        baseline = device.stats().bytesInUse();
    }

    @AfterEach
    void close() {
        if (device != null) {
            assertThat(device.stats().bytesInUse()).as("device bytes after the test").isEqualTo(baseline);
            device.close();
        }
    }

    @Test
    void onOneRankEveryCollectiveLeavesTheBytesAsTheyWere() {
        System.out.println("NCCL " + NcclLibrary.version());
        // finite floats: with one rank nothing is added, but no NaN payload can blur what "the same bytes" means
        ByteBuffer values = ByteBuffer.allocate(3 << 20).order(ByteOrder.LITTLE_ENDIAN);
        values.asFloatBuffer().put(RankData.floats(7, 0, values.capacity() / 4));
        byte[] bytes = values.array();
        DeviceBuffer a = device.allocate(bytes.length);
        DeviceBuffer b = device.allocate(bytes.length);
        try (NcclCollective nccl = NcclCollective.join(device, 0, 1, NcclCollective.uniqueId(), TIMEOUT)) {
            assertThat(nccl.rank()).isZero();
            assertThat(nccl.size()).isEqualTo(1);
            upload(bytes, a);
            nccl.allReduceSum(a, 64, (bytes.length - 64) / 4);
            assertThat(download(a)).as("all-reduce").isEqualTo(bytes);
            nccl.broadcast(a, 1, bytes.length - 1);
            assertThat(download(a)).as("broadcast").isEqualTo(bytes);
            nccl.allGather(a, 0, b, 0, bytes.length);
            assertThat(download(b)).as("all-gather").isEqualTo(bytes);
            nccl.allGather(b, 0, b, 0, bytes.length);
            assertThat(download(b)).as("all-gather in place").isEqualTo(bytes);
            nccl.barrier();
            for (int i = 0; i < 1000; i++) {
                nccl.allReduceSum(a, 0, 256);
            }
            assertThat(download(a)).as("after 1000 small all-reduces").isEqualTo(bytes);
        } finally {
            device.free(a);
            device.free(b);
        }
    }

    @Test
    void abortFailsEveryLaterCallWithAborted() {
        DeviceBuffer a = device.allocate(1024);
        try (NcclCollective nccl = NcclCollective.join(device, 0, 1, NcclCollective.uniqueId(), TIMEOUT)) {
            nccl.allReduceSum(a, 0, 256);
            nccl.abort();
            nccl.abort();
            CollectiveException e = failureOf(() -> nccl.allReduceSum(a, 0, 256));
            assertThat(e.reason()).isEqualTo(Reason.ABORTED);
            assertThat(e.operation()).isEqualTo(CollectiveOperation.ALL_REDUCE_SUM);
            assertThat(e.sequence()).isEqualTo(2);
            assertThat(failureOf(nccl::barrier).reason()).isEqualTo(Reason.ABORTED);
        } finally {
            device.free(a);
        }
        device.synchronize(); // the stream still moves
    }

    @Test
    void aJoinThatNoOtherRankAnswersTimesOutWithinTheBound() {
        Duration bound = Duration.ofSeconds(3);
        long start = System.nanoTime();
        CollectiveException e = failureOf(() -> NcclCollective.join(device, 0, 2, NcclCollective.uniqueId(), bound));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(e.reason()).isEqualTo(Reason.TIMEOUT);
        assertThat(e.operation()).isEqualTo(CollectiveOperation.JOIN);
        assertThat(tookMillis).as("failed within the bound (+5 s)").isLessThan(bound.toMillis() + 5_000);
        device.synchronize();
    }

    @Test
    void badArgumentsAreRefusedAndLeaveTheCommunicatorUsable() {
        DeviceBuffer a = device.allocate(64);
        DeviceBuffer freed = device.allocate(64);
        device.free(freed);
        try (HostDevice host = new HostDevice();
                NcclCollective nccl = NcclCollective.join(device, 0, 1, NcclCollective.uniqueId(), TIMEOUT)) {
            DeviceBuffer onHost = host.allocate(64);
            assertThat(failureOf(() -> nccl.allReduceSum(a, 4, 16)).reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            assertThat(failureOf(() -> nccl.allReduceSum(onHost, 0, 16)).reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            assertThat(failureOf(() -> nccl.broadcast(freed, 0, 8)).reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            assertThat(failureOf(() -> nccl.allGather(a, 0, a, 8, 16)).reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            host.free(onHost);
            nccl.allReduceSum(a, 0, 16);
        } finally {
            device.free(a);
        }
        assertThat(failureOf(() -> NcclCollective.join(device, 1, 1, new byte[128], TIMEOUT)).reason())
                .isEqualTo(Reason.INVALID_ARGUMENT);
        assertThat(failureOf(() -> NcclCollective.join(device, 0, 1, new byte[12], TIMEOUT)).reason())
                .isEqualTo(Reason.INVALID_ARGUMENT);
    }

    private void upload(byte[] bytes, DeviceBuffer to) {
        device.copyFromHost(ByteBuffer.wrap(bytes), to, 0);
    }

    private byte[] download(DeviceBuffer from) {
        byte[] bytes = new byte[(int) from.nbytes()];
        device.copyToHost(from, 0, ByteBuffer.wrap(bytes));
        return bytes;
    }
}
