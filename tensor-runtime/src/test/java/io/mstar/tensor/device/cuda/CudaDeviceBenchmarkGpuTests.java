package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * GPU figures for benchmarks/README.md, printed as {@code [bench]} lines, never asserted: the caching
 * allocator against raw cuMemAlloc/cuMemFree, and staged or pinned host↔device copies against the peak of a
 * raw synchronous cuMemcpy from a 256 MiB pinned buffer measured in the same run. Medians of repeated runs.
 */
@Tag("gpu")
@Order(2)
class CudaDeviceBenchmarkGpuTests {

    private static final int MIB = 1 << 20;
    private static final int COPY_BYTES = 256 * MIB;
    private static final int COPY_REPS = 15;

    @Test
    void cachingAllocatorAgainstRawCuMemAlloc() {
        try (CudaDevice device = new CudaDevice(0)) {
            for (long size : new long[] {4096, MIB, 64L * MIB}) {
                int rawOps = size >= 64L * MIB ? 200 : 2000;
                double raw = median(7, () -> rawAllocFree(device, size, rawOps)) / rawOps;
                int cachedOps = 200_000;
                double cached = median(7, () -> cachedAllocFree(device, size, cachedOps)) / cachedOps;
                System.out.printf("[bench] alloc+free %8d B: raw cuMemAlloc/cuMemFree %9.0f ns/pair (%,10.0f pairs/s)"
                                + " | caching allocator %7.1f ns/pair (%,12.0f pairs/s) | ratio %.0fx%n",
                        size, raw, 1e9 / raw, cached, 1e9 / cached, raw / cached);
            }
            // a mix of sizes, as a batch of tensors of varying shapes asks for them
            long[] sizes = new long[256];
            Random random = new Random(11);
            for (int i = 0; i < sizes.length; i++) {
                sizes[i] = 1 + (long) (Math.pow(2, 12 + random.nextDouble() * 14) + random.nextInt(4096));
            }
            double raw = median(7, () -> {
                device.bind();
                CUdeviceptr p = new CUdeviceptr();
                long t0 = System.nanoTime();
                for (long size : sizes) {
                    device.check(cuMemAlloc(p, size), "cuMemAlloc");
                    device.check(cuMemFree(p), "cuMemFree");
                }
                return System.nanoTime() - t0;
            }) / sizes.length;
            int rounds = 500;
            double cached = median(7, () -> {
                long t0 = System.nanoTime();
                for (int r = 0; r < rounds; r++) {
                    for (long size : sizes) {
                        device.free(device.allocate(size));
                    }
                }
                return System.nanoTime() - t0;
            }) / (rounds * (double) sizes.length);
            System.out.printf("[bench] alloc+free mixed 4 KiB..64 MiB: raw %9.0f ns/pair | caching allocator %7.1f ns/pair | ratio %.0fx%n",
                    raw, cached, raw / cached);
            assertThat(device.stats().liveBuffers()).isZero();
        }
    }

    @Test
    void stagedAndPinnedCopiesAgainstPinnedPeak() {
        byte[] bytes = new byte[COPY_BYTES];
        new Random(7).nextBytes(bytes);
        try (CudaDevice device = new CudaDevice(0)) {
            DeviceBuffer target = device.allocate(COPY_BYTES);
            CUdeviceptr dptr = ((CudaBuffer) target).pointer(0);
            double peakH2D;
            double peakD2H;
            try (PinnedHostBuffer pinned = device.allocatePinned(COPY_BYTES)) {
                pinned.buffer().put(0, bytes);
                Pointer host = pinned.pointer();
                peakH2D = gbps(median(COPY_REPS, () -> time(() -> device.check(cuMemcpyHtoD(dptr, host, COPY_BYTES), "cuMemcpyHtoD"))));
                peakD2H = gbps(median(COPY_REPS, () -> time(() -> device.check(cuMemcpyDtoH(host, dptr, COPY_BYTES), "cuMemcpyDtoH"))));
                System.out.printf("[bench] peak (raw synchronous cuMemcpy, 256 MiB pinned): H2D %.1f GB/s, D2H %.1f GB/s%n", peakH2D, peakD2H);

                report("copyFromHost, PinnedHostBuffer (direct DMA)", peakH2D,
                        median(COPY_REPS, () -> time(() -> device.copyFromHost(pinned.buffer(), target, 0))));
                report("copyToHost,   PinnedHostBuffer (direct DMA)", peakD2H,
                        median(COPY_REPS, () -> time(() -> device.copyToHost(target, 0, pinned.buffer()))));
            }
            ByteBuffer direct = ByteBuffer.allocateDirect(COPY_BYTES).put(0, bytes);
            ByteBuffer heap = ByteBuffer.wrap(bytes);
            for (int[] variant : new int[][] {{16, 4}, {16, 8}, {8, 8}, {16, 12}, {32, 12}, {8, 16}, {16, 16}}) {
                try (CudaDevice dev = new CudaDevice(0, new CudaDeviceSettings((long) variant[0] * MIB, variant[1]))) {
                    DeviceBuffer t = dev.allocate(COPY_BYTES);
                    String label = "chunk " + variant[0] + " MiB x2, " + variant[1] + " thread(s)";
                    dev.copyFromHost(heap, t, 0);
                    report("copyFromHost, staged direct ByteBuffer, " + label, peakH2D,
                            median(COPY_REPS, () -> time(() -> dev.copyFromHost(direct.duplicate(), t, 0))));
                    report("copyFromHost, staged heap ByteBuffer,   " + label, peakH2D,
                            median(COPY_REPS, () -> time(() -> dev.copyFromHost(heap.duplicate(), t, 0))));
                    report("copyToHost,   staged direct ByteBuffer, " + label, peakD2H,
                            median(COPY_REPS, () -> time(() -> dev.copyToHost(t, 0, direct.duplicate()))));
                    dev.free(t);
                }
            }
            byte[] check = new byte[COPY_BYTES];
            direct.get(0, check);
            assertThat(check).isEqualTo(bytes);
            device.free(target);
        }
    }

    private static void report(String what, double peak, double nanos) {
        double gbps = gbps(nanos);
        System.out.printf("[bench] %-72s %6.1f GB/s = %.2f of peak%n", what, gbps, gbps / peak);
    }

    private static double gbps(double nanos) {
        return COPY_BYTES / nanos;
    }

    private static double rawAllocFree(CudaDevice device, long size, int ops) {
        device.bind();
        CUdeviceptr p = new CUdeviceptr();
        long t0 = System.nanoTime();
        for (int i = 0; i < ops; i++) {
            device.check(cuMemAlloc(p, size), "cuMemAlloc");
            device.check(cuMemFree(p), "cuMemFree");
        }
        return System.nanoTime() - t0;
    }

    private static double cachedAllocFree(CudaDevice device, long size, int ops) {
        long t0 = System.nanoTime();
        for (int i = 0; i < ops; i++) {
            device.free(device.allocate(size));
        }
        return System.nanoTime() - t0;
    }

    private static double time(Runnable r) {
        long t0 = System.nanoTime();
        r.run();
        return System.nanoTime() - t0;
    }

    private interface Measure {
        double run();
    }

    private static double median(int reps, Measure m) {
        m.run(); // warm-up
        double[] t = new double[reps];
        for (int i = 0; i < reps; i++) {
            t[i] = m.run();
        }
        Arrays.sort(t);
        return t[reps / 2];
    }
}
