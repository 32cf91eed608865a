package io.mstar.worker.kernel.cuda;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.DeviceMemoryStats;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static io.mstar.worker.kernel.cuda.HostCounterReference.bytes;
import static io.mstar.worker.kernel.cuda.HostCounterReference.read;
import static io.mstar.worker.kernel.cuda.HostCounterReference.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The counter kernels on a real GPU against the same arithmetic in Java on {@link HostDevice}: every output
 * buffer must match byte for byte, including the bytes past {@code n} that a kernel must not touch, on
 * random full-range int32s (overflow wraps), empty inputs and inputs large enough for many blocks.
 */
@Tag("gpu")
class CounterCudaKernelsGpuTests {

    private static final long SEED = Seeds.of("CounterCudaKernelsGpuTests");
    /** Past one grid of MAX_GRID * BLOCK threads, so the grid-stride loops go round more than once. */
    private static final int[] SIZES = {0, 1, 31, 255, 256, 257, 4099, 65_543, 1 << 20, 1_000_003};

    private static CudaDevice device;
    private static CounterCudaKernels kernels;
    private static HostDevice host;
    private static HostCounterReference reference;

    private DeviceMemoryStats deviceBaseline;
    private DeviceMemoryStats hostBaseline;

    @BeforeAll
    static void open() {
        assumeTrue(CounterCudaKernels.available(), CounterCudaKernels.unavailableReason().orElse(""));
        device = new CudaDevice(0);
        kernels = new CounterCudaKernels(device);
        host = new HostDevice("host", 1L << 30);
        reference = new HostCounterReference(host);
    }

    @AfterAll
    static void close() {
        if (device != null) {
            device.close();
        }
        if (host != null) {
            host.close();
        }
    }

    @BeforeEach
    void baseline() {
        deviceBaseline = device.stats();
        hostBaseline = host.stats();
    }

    @AfterEach
    void everyBufferIsFreedAndTheDeviceIsHealthy() {
        device.synchronize();
        assertThat(device.stats().bytesInUse()).isEqualTo(deviceBaseline.bytesInUse());
        assertThat(device.stats().liveBuffers()).isEqualTo(deviceBaseline.liveBuffers());
        assertThat(host.stats().bytesInUse()).isEqualTo(hostBaseline.bytesInUse());
        assertThat(host.stats().liveBuffers()).isEqualTo(hostBaseline.liveBuffers());
        assertThat(device.isHealthy()).isTrue();
    }

    @Test
    void addScalarMatchesJavaOnEveryShapeAndLeavesTheTailAlone() {
        Random random = new Random(SEED);
        for (int n : SIZES) {
            for (int value : new int[] {1, random.nextInt()}) {
                Twin in = twin(randomInts(random, n));
                Twin out = twin(randomInts(random, n + 3));

                kernels.addScalar(in.gpu, out.gpu, n, value);
                reference.addScalar(in.host, out.host, n, value);

                out.assertSame("addScalar n=%d value=%d", n, value);
                in.assertSame("addScalar input n=%d", n);
                in.free();
                out.free();
            }
        }
    }

    @Test
    void mulScalarMatchesJavaIncludingAnEmptyChunk() {
        Random random = new Random(SEED + 1);
        for (int n : SIZES) {
            for (int value : new int[] {10, random.nextInt()}) {
                Twin in = twin(randomInts(random, n));
                Twin out = twin(randomInts(random, n + 3));

                kernels.mulScalar(in.gpu, out.gpu, n, value);
                reference.mulScalar(in.host, out.host, n, value);

                out.assertSame("mulScalar n=%d value=%d", n, value);
                in.free();
                out.free();
            }
        }
    }

    @Test
    void elementwiseKernelsWorkInPlace() {
        Random random = new Random(SEED + 2);
        int n = 100_003;
        Twin data = twin(randomInts(random, n));

        kernels.addScalar(data.gpu, data.gpu, n, 1);
        kernels.mulScalar(data.gpu, data.gpu, n, 10);
        reference.addScalar(data.host, data.host, n, 1);
        reference.mulScalar(data.host, data.host, n, 10);

        data.assertSame("in place n=%d", n);
        data.free();
    }

    @Test
    void sumMatchesJavaOnEmptySmallAndLargeInputs() {
        Random random = new Random(SEED + 3);
        for (int n : new int[] {0, 1, 32, 33, 1000, 65_543, 1 << 20, (1 << 20) + 1, 3_000_001}) {
            Twin in = twin(randomInts(random, n));
            Twin out = twin(randomInts(random, 2));

            kernels.sum(in.gpu, n, out.gpu);
            reference.sumPlus(in.host, n, 0, out.host);

            out.assertSame("sum n=%d", n);
            in.free();
            out.free();
        }
    }

    @Test
    void aMillionOnesSumToAMillion() {
        int n = 1 << 20;
        int[] ones = new int[n];
        java.util.Arrays.fill(ones, 1);
        DeviceBuffer in = device.allocate(4L * n);
        DeviceBuffer out = device.allocate(4);
        write(device, ones, in);
        write(device, new int[] {-7}, out);

        kernels.sum(in, n, out);

        assertThat(read(device, out, 1)[0]).isEqualTo(n);
        device.free(in);
        device.free(out);
    }

    @Test
    void sumPlusAddsTheAddendAndMayWriteOverIt() {
        Random random = new Random(SEED + 4);
        for (int n : SIZES) {
            Twin in = twin(randomInts(random, n));
            int addend = random.nextInt();
            Twin base = twin(new int[] {addend});
            Twin out = twin(randomInts(random, 2));

            kernels.sumPlus(in.gpu, n, base.gpu, out.gpu);
            reference.sumPlus(in.host, n, addend, out.host);
            out.assertSame("sumPlus n=%d addend=%d", n, addend);
            base.assertSame("sumPlus addend n=%d", n);

            kernels.sumPlus(in.gpu, n, base.gpu, base.gpu);
            reference.sumPlus(in.host, n, addend, base.host);
            base.assertSame("sumPlus into its addend n=%d", n);
            in.free();
            base.free();
            out.free();
        }
    }

    @Test
    void stepCountsUpInPlaceAndRaisesTheFlagExactlyAtStopAt() {
        Random random = new Random(SEED + 5);
        int start = random.nextInt();
        int stopAt = start + 3;
        Twin state = twin(new int[] {start});
        DeviceBuffer finished = device.allocate(4);
        DeviceBuffer hostFinished = host.allocate(4);

        for (int i = 1; i <= 4; i++) {
            kernels.step(state.gpu, state.gpu, stopAt, finished);
            boolean expected = reference.step(state.host, state.host, stopAt);

            state.assertSame("step %d from %d", i, start);
            assertThat(kernels.isFinished(finished)).as("flag after step %d", i).isEqualTo(expected).isEqualTo(i == 3);
            // the flag word itself is exactly 0 or 1, as a Java int of the comparison would be
            write(host, new int[] {expected ? 1 : 0}, hostFinished);
            assertThat(bytes(device, finished)).isEqualTo(bytes(host, hostFinished));
        }
        device.free(finished);
        host.free(hostFinished);
        state.free();
    }

    @Test
    void stepWrapsAtTheTopOfInt32IntoASeparateOutput() {
        Twin state = twin(new int[] {Integer.MAX_VALUE});
        Twin next = twin(new int[] {12345});
        DeviceBuffer finished = device.allocate(4);

        kernels.step(state.gpu, next.gpu, Integer.MIN_VALUE, finished);
        boolean expected = reference.step(state.host, next.host, Integer.MIN_VALUE);

        next.assertSame("step past MAX_VALUE");
        state.assertSame("step input");
        assertThat(kernels.isFinished(finished)).isEqualTo(expected).isTrue();
        device.free(finished);
        state.free();
        next.free();
    }

    @Test
    void theCounterModelsOutputsFollowTheFormulaOfItsJavadoc() {
        Random random = new Random(SEED + 6);
        int n = 1 + random.nextInt(50);
        int[] tokens = new int[n];
        long tokenSum = 0;
        for (int i = 0; i < n; i++) {
            tokens[i] = random.nextInt(1000);
            tokenSum += tokens[i];
        }
        int s0 = (int) (2 * tokenSum + n);
        int stopAt = s0 + 3;
        DeviceBuffer in = device.allocate(4L * n);
        DeviceBuffer h = device.allocate(4L * n);
        DeviceBuffer base = device.allocate(4);
        DeviceBuffer state = device.allocate(4);
        DeviceBuffer finished = device.allocate(4);
        DeviceBuffer stream = device.allocate(4 * 2);
        DeviceBuffer text = device.allocate(4 * 2);
        write(device, tokens, in);

        kernels.addScalar(in, h, n, 1);
        kernels.sum(in, n, base);
        kernels.sumPlus(h, n, base, state);
        assertThat(read(device, state, 1)).containsExactly(s0);
        int emitted = 0;
        boolean done = false;
        while (!done && emitted < 4) {
            kernels.step(state, state, stopAt, finished);
            done = kernels.isFinished(finished);
            emitted++;
            assertThat(read(device, state, 1)).containsExactly(s0 + emitted);
        }
        assertThat(emitted).isEqualTo(3);
        write(device, new int[] {s0 + 1, s0 + 2}, stream);
        kernels.mulScalar(stream, text, 2, 10);
        assertThat(read(device, text, 2)).containsExactly(10 * (s0 + 1), 10 * (s0 + 2));

        for (DeviceBuffer b : new DeviceBuffer[] {in, h, base, state, finished, stream, text}) {
            device.free(b);
        }
    }

    @Test
    void refusedOperandsLaunchNothingAndLeaveTheDeviceHealthy() {
        DeviceBuffer in = device.allocate(4 * 8);
        DeviceBuffer out = device.allocate(4 * 8);
        DeviceBuffer foreign = host.allocate(4 * 8);
        write(device, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, in);
        write(device, new int[] {9, 9, 9, 9, 9, 9, 9, 9}, out);
        try {
            assertInvalid(() -> kernels.addScalar(in, out, 9, 1));
            assertInvalid(() -> kernels.addScalar(foreign, out, 8, 1));
            assertInvalid(() -> kernels.mulScalar(in, out, -1, 10));
            assertInvalid(() -> kernels.sum(in, 8, in));
            assertInvalid(() -> kernels.sumPlus(in, 8, foreign, out));
            assertInvalid(() -> kernels.step(in, out, 3, out));

            assertThat(read(device, out, 8)).containsOnly(9);
            assertThat(read(device, in, 8)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        } finally {
            device.free(in);
            device.free(out);
            host.free(foreign);
        }
    }

    private static void assertInvalid(org.junit.jupiter.api.function.Executable call) {
        assertThatThrownBy(call::execute)
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
    }

    /** Full-range int32s with the extremes planted, so every overflow path is exercised. */
    private static int[] randomInts(Random random, int n) {
        int[] v = new int[n];
        for (int i = 0; i < n; i++) {
            v[i] = random.nextInt();
        }
        int[] extremes = {Integer.MAX_VALUE, Integer.MIN_VALUE, -1, 0};
        for (int i = 0; i < Math.min(n, extremes.length); i++) {
            v[random.nextInt(n)] = extremes[i];
        }
        return v;
    }

    private static Twin twin(int[] values) {
        DeviceBuffer gpu = device.allocate(4L * values.length);
        DeviceBuffer onHost = host.allocate(4L * values.length);
        write(device, values, gpu);
        write(host, values, onHost);
        return new Twin(gpu, onHost);
    }

    /** The same int32s on the GPU and on the host; the kernels change one, the reference the other. */
    private record Twin(DeviceBuffer gpu, DeviceBuffer host) {

        void assertSame(String what, Object... args) {
            assertThat(bytes(device, gpu)).as(String.format(what, args) + " seed " + SEED)
                    .isEqualTo(bytes(CounterCudaKernelsGpuTests.host, host));
        }

        void free() {
            device.free(gpu);
            CounterCudaKernelsGpuTests.host.free(host);
        }
    }
}
