package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.DeviceMemoryStats;
import io.mstar.tensor.device.Transfer;
import io.mstar.testing.Seeds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * CudaDevice on a real GPU: allocator reuse, copies both ways (staged and pinned), events, and the errors
 * that must not poison the device. The fatal path is in {@link CudaFatalErrorGpuTests}, ordered last.
 */
@Tag("gpu")
@Order(1)
class CudaDeviceGpuTests {

    private static final long SEED = Seeds.of("CudaDeviceGpuTests");
    private static CudaDevice device;

    @BeforeAll
    static void open() {
        device = new CudaDevice(0);
    }

    @AfterAll
    static void close() {
        if (device != null) {
            device.close();
        }
    }

    @Test
    void aFreedBlockIsReusedForTheSameSizeClassAndCountedAsACacheHit() {
        DeviceMemoryStats before = device.stats();
        DeviceBuffer a = device.allocate(1000);
        long address = a.address();
        device.free(a);

        DeviceBuffer b = device.allocate(900);

        assertThat(b.address()).isEqualTo(address);
        assertThat(device.stats().cacheHits()).isEqualTo(before.cacheHits() + 1);
        DeviceBuffer large = device.allocate(3L << 20);
        long largeAddress = large.address();
        device.free(large);
        DeviceBuffer large2 = device.allocate((3L << 20) + 12345);
        assertThat(large2.address()).isEqualTo(largeAddress);
        device.free(b);
        device.free(large2);
        DeviceMemoryStats after = device.stats();
        assertThat(after.bytesInUse()).isEqualTo(before.bytesInUse());
        assertThat(after.liveBuffers()).isEqualTo(before.liveBuffers());
        assertThat(after.cacheHits()).isEqualTo(before.cacheHits() + 2);
        assertThat(after.allocations()).isEqualTo(before.allocations() + 4);
    }

    @Test
    void emptyCacheGivesFreeBlocksBackAndKeepsLiveOnes() {
        DeviceBuffer keep = device.allocate(5 << 20);
        device.free(device.allocate(7 << 20));
        device.emptyCache();

        assertThat(device.stats().bytesReserved()).isEqualTo(6L << 20);
        device.free(keep);
        device.emptyCache();
        assertThat(device.stats().bytesReserved()).isZero();
    }

    @Test
    void randomBytesRoundTripThroughStagingAtUnalignedOffsets() {
        Random random = new Random(SEED);
        for (int size : new int[] {1, 7, 511, 4099, (1 << 20) + 17, (40 << 20) + 5}) {
            for (int offset : new int[] {0, 3, 1001}) {
                byte[] bytes = new byte[size];
                random.nextBytes(bytes);
                DeviceBuffer buffer = device.allocate(size + offset + 64);
                device.copyFromHost(ByteBuffer.wrap(bytes), buffer, offset);
                ByteBuffer back = ByteBuffer.allocate(size + 9).position(9);

                device.copyToHost(buffer, offset, back);

                byte[] out = new byte[size];
                back.position(9).get(out);
                assertThat(out).as("size %d offset %d seed %d", size, offset, SEED).isEqualTo(bytes);
                device.free(buffer);
            }
        }
    }

    @Test
    void aBatchOfSmallCopiesWaitsOnceAndMovesTheSameBytesAsOneByOne() {
        Random random = new Random(SEED + 2);
        for (int round = 0; round < 6; round++) {
            int settingsChunk = round < 4 ? 64 << 10 : 4096;
            // 4 KiB of staging: the batch (its last copy alone) does not fit and goes one copy at a time
            try (CudaDevice d = new CudaDevice(0, new CudaDeviceSettings(settingsChunk, 2))) {
                // 1 to 3 copies go as copies, more through the gather and scatter kernels
                int count = settingsChunk == 4096 ? 1 + random.nextInt(40) : round % 2 == 0 ? 1 + random.nextInt(3)
                        : 4 + random.nextInt(40);
                List<DeviceBuffer> buffers = new ArrayList<>();
                List<byte[]> sent = new ArrayList<>();
                List<Transfer> in = new ArrayList<>();
                List<Transfer> out = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    int size = i == count - 1 && settingsChunk == 4096 ? 4097
                            : random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(200);
                    int offset = random.nextInt(9);
                    byte[] bytes = new byte[size];
                    random.nextBytes(bytes);
                    DeviceBuffer b = d.allocate(size + offset + 1);
                    buffers.add(b);
                    sent.add(bytes);
                    in.add(new Transfer(b, offset, ByteBuffer.wrap(bytes)));
                    out.add(new Transfer(b, offset, ByteBuffer.allocate(size + 3).position(3)));
                }

                d.copyFromHost(in);
                d.copyToHost(out);

                for (int i = 0; i < count; i++) {
                    byte[] back = new byte[sent.get(i).length];
                    out.get(i).host().duplicate().get(back);
                    assertThat(back).as("transfer %d of %d, chunk %d, seed %d", i, count, settingsChunk, SEED + 2)
                            .isEqualTo(sent.get(i));
                    assertThat(out.get(i).host().position()).as("the host buffer's position is left as it was")
                            .isEqualTo(3);
                }
                buffers.forEach(d::free);
            }
        }
    }

    @Test
    void smallStagingChunksPipelineManyChunksBothWays() {
        Random random = new Random(SEED + 1);
        try (CudaDevice small = new CudaDevice(0, new CudaDeviceSettings(64 << 10, 3))) {
            int size = (5 << 20) + 333;
            byte[] bytes = new byte[size];
            random.nextBytes(bytes);
            ByteBuffer src = ByteBuffer.allocateDirect(size).put(bytes).flip();
            DeviceBuffer buffer = small.allocate(size + 5);

            small.copyFromHost(src, buffer, 5);
            ByteBuffer back = ByteBuffer.allocateDirect(size);
            small.copyToHost(buffer, 5, back);

            byte[] out = new byte[size];
            back.get(out);
            assertThat(out).as("seed %d", SEED).isEqualTo(bytes);
            assertThat(small.stagedBytes()).isEqualTo(2L * size);
            assertThat(small.directBytes()).isZero();
            small.free(buffer);
        }
    }

    @Test
    void pinnedHostBuffersAreCopiedByDmaWithoutStaging() {
        Random random = new Random(SEED + 2);
        int size = (3 << 20) + 1;
        try (PinnedHostBuffer in = device.allocatePinned(size + 16); PinnedHostBuffer out = device.allocatePinned(size)) {
            byte[] bytes = new byte[size];
            random.nextBytes(bytes);
            in.buffer().position(16).put(bytes).position(16);
            DeviceBuffer buffer = device.allocate(size);
            long staged = device.stagedBytes();
            long direct = device.directBytes();

            device.copyFromHost(in.buffer(), buffer, 0);
            device.copyToHost(buffer, 0, out.buffer());

            byte[] got = new byte[size];
            out.buffer().get(0, got);
            assertThat(got).as("seed %d", SEED).isEqualTo(bytes);
            assertThat(device.directBytes() - direct).isEqualTo(2L * size);
            assertThat(device.stagedBytes()).isEqualTo(staged);
            device.free(buffer);
        }
    }

    @Test
    void recordedEventsCompleteAndMeasureElapsedDeviceTime() {
        DeviceBuffer buffer = device.allocate(64 << 20);
        ByteBuffer src = ByteBuffer.allocateDirect(64 << 20);
        try (CudaEvent start = device.recordEvent()) {
            device.copyFromHost(src, buffer, 0);
            try (CudaEvent end = device.recordEvent()) {
                end.synchronize();

                assertThat(start.isComplete()).isTrue();
                assertThat(end.isComplete()).isTrue();
                assertThat(end.elapsedMillisSince(start)).isGreaterThan(0f);
            }
        } finally {
            device.free(buffer);
        }
    }

    @Test
    void kernelsFillAndScaleDeviceMemory() {
        assumeTrue(CudaKernels.available(), "built without nvcc: no PTX");
        CudaKernels kernels = new CudaKernels(device);
        int n = 1_000_003;
        DeviceBuffer buffer = device.allocate(4L * n);
        kernels.fill(buffer, Float.floatToRawIntBits(1.5f), n);
        kernels.scale(buffer, 4f, n);
        ByteBuffer out = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());

        device.copyToHost(buffer, 0, out);

        for (int i = 0; i < n; i += 9973) {
            assertThat(out.getFloat(4 * i)).as("element %d", i).isEqualTo(6f);
        }
        assertThat(out.getFloat(4 * (n - 1))).isEqualTo(6f);
        device.free(buffer);
    }

    @Test
    void anAbsurdAllocationIsOutOfMemoryAndTheDeviceStaysHealthy() {
        DeviceMemoryStats before = device.stats();

        assertThatThrownBy(() -> device.allocate(1L << 44))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.OUT_OF_MEMORY));

        assertThat(device.isHealthy()).isTrue();
        assertThat(device.stats().allocations()).isEqualTo(before.allocations());
        DeviceBuffer fine = device.allocate(1 << 20);
        device.free(fine);
    }

    @Test
    void aDoubleFreeIsInvalidArgument() {
        DeviceBuffer buffer = device.allocate(4096);
        device.free(buffer);

        assertThatThrownBy(() -> device.free(buffer))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
        assertThat(device.isHealthy()).isTrue();
    }

    @Test
    void aBufferOfAnotherDeviceIsInvalidArgument() {
        try (CudaDevice other = new CudaDevice(0)) {
            DeviceBuffer foreign = other.allocate(4096);

            assertThatThrownBy(() -> device.free(foreign))
                    .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
            assertThatThrownBy(() -> device.copyFromHost(ByteBuffer.allocate(8), foreign, 0))
                    .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
            other.free(foreign);
        }
        assertThat(device.isHealthy()).isTrue();
    }

    @Test
    void aCopyOutsideTheBufferIsInvalidArgument() {
        DeviceBuffer buffer = device.allocate(100);
        try {
            assertThatThrownBy(() -> device.copyFromHost(ByteBuffer.allocate(50), buffer, 51))
                    .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
            assertThatThrownBy(() -> device.copyToHost(buffer, -1, ByteBuffer.allocate(10)))
                    .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
        } finally {
            device.free(buffer);
        }
    }

    @Test
    void anInvalidDriverArgumentIsClassifiedFromTheRealResult() {
        // cuMemAlloc(0) answers CUDA_ERROR_INVALID_VALUE: the path through check() on a real driver result
        assertThatThrownBy(() -> device.check(jcuda.driver.JCudaDriver.cuMemAlloc(new jcuda.driver.CUdeviceptr(), 0), "cuMemAlloc(0)"))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("CUDA_ERROR_INVALID_VALUE");
                });
        assertThat(device.isHealthy()).isTrue();
    }
}
