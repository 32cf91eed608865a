package io.mstar.worker.kernel.cuda;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.cuda.CudaDevice;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static io.mstar.worker.kernel.cuda.Int32Operands.requireDistinct;
import static io.mstar.worker.kernel.cuda.Int32Operands.requireInt32s;

/**
 * The built-in {@code counter} model's node kernels on a GPU ({@code src/main/cuda/counter_kernels.cu}, loaded
 * as PTX into a {@link CudaDevice}). Each method is one operation on int32 {@link DeviceBuffer}s with the
 * model's arithmetic, wrapping modulo 2^32 as Java's {@code int} does; the node kernels map onto them as
 * <ul>
 *   <li>{@code embed}: {@code addScalar(tokens, h, n, 1)}</li>
 *   <li>{@code offset}: {@code sum(tokens, n, base)}</li>
 *   <li>{@code count}: {@code sumPlus(h, n, base, state)}</li>
 *   <li>{@code step}: {@code step(state, next, stopAt, finished)} then {@code isFinished(finished)}, or
 *       {@code addScalar(state, next, 1, 1)} when the request has no {@code stop_at}</li>
 *   <li>{@code detok}: {@code mulScalar(chunk, text, n, 10)}, {@code n} possibly 0</li>
 * </ul>
 *
 * <p>Launches are asynchronous on the device's one stream, so operations run in the order they are issued and
 * a later copy from the device sees their results; a fault surfaces as a {@link DeviceException} at the next
 * synchronizing call. Operands are checked on the host first: a bad one is
 * {@link Reason#INVALID_ARGUMENT} and nothing is launched. Allocates no device memory of its own.
 *
 * <p>The PTX is built by nvcc at build time; a build without nvcc has none, and {@link #available()} says so.
 * Owned by the engine loop, like the device it launches on: not thread-safe.
 */
public final class CounterCudaKernels {

    static final String PTX_RESOURCE = "counter_kernels.ptx";
    static final String NO_PTX_REASON = "CUDA kernels unavailable: this build has no PTX (nvcc was not on the PATH)";

    static final String ADD_SCALAR = "counter_add_scalar_i32";
    static final String MUL_SCALAR = "counter_mul_scalar_i32";
    static final String SUM_INIT = "counter_sum_init_i32";
    static final String SUM_ACCUMULATE = "counter_sum_accumulate_i32";
    static final String STEP = "counter_step_i32";
    /** Every entry point this class launches; the PTX must define each one. */
    static final List<String> KERNELS = List.of(ADD_SCALAR, MUL_SCALAR, SUM_INIT, SUM_ACCUMULATE, STEP);

    /** Threads per block: a multiple of 32, which the reduction's warp shuffles rely on. */
    static final int BLOCK = 256;
    /** Enough blocks to fill an H100/H200 (132 SMs) several times over; grid-stride loops cover the rest. */
    static final int MAX_GRID = 132 * 8;

    private final CudaDevice device;
    private final CUfunction addScalar;
    private final CUfunction mulScalar;
    private final CUfunction sumInit;
    private final CUfunction sumAccumulate;
    private final CUfunction step;
    /** Where {@link #isFinished} lands the flag; reused because the engine loop is the only caller. */
    private final ByteBuffer flag = ByteBuffer.allocateDirect(Int32Operands.INT32_BYTES).order(ByteOrder.nativeOrder());

    /** Loads the kernels into {@code device}; the device unloads them when it closes. */
    public CounterCudaKernels(CudaDevice device) {
        String ptx = ptx(PTX_RESOURCE);
        if (ptx == null) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), NO_PTX_REASON);
        }
        this.device = device;
        CUmodule module = device.loadModule(ptx);
        this.addScalar = device.function(module, ADD_SCALAR);
        this.mulScalar = device.function(module, MUL_SCALAR);
        this.sumInit = device.function(module, SUM_INIT);
        this.sumAccumulate = device.function(module, SUM_ACCUMULATE);
        this.step = device.function(module, STEP);
    }

    /** Whether this build carries the kernels' PTX (a GPU is still needed to run them). */
    public static boolean available() {
        return unavailableReason().isEmpty();
    }

    /** Why {@link #available()} is false, for the worker's start-up log; empty when it is true. */
    public static Optional<String> unavailableReason() {
        return unavailableReason(PTX_RESOURCE);
    }

    static Optional<String> unavailableReason(String resource) {
        return CounterCudaKernels.class.getResource(resource) == null ? Optional.of(NO_PTX_REASON) : Optional.empty();
    }

    public CudaDevice device() {
        return device;
    }

    /** {@code out[i] = in[i] + value} for {@code i < n}; {@code in} and {@code out} may be the same buffer. */
    public void addScalar(DeviceBuffer in, DeviceBuffer out, long n, int value) {
        elementwise(addScalar, in, out, n, value);
    }

    /** {@code out[i] = in[i] * value} for {@code i < n}; {@code in} and {@code out} may be the same buffer. */
    public void mulScalar(DeviceBuffer in, DeviceBuffer out, long n, int value) {
        elementwise(mulScalar, in, out, n, value);
    }

    /** {@code out[0] = in[0] + ... + in[n-1]} (0 when {@code n} is 0); {@code out} must not be {@code in}. */
    public void sum(DeviceBuffer in, long n, DeviceBuffer out) {
        requireInt32s(device, in, n, "sum input");
        requireInt32s(device, out, 1, "sum output");
        requireDistinct(device, out, in, n, "sum output");
        reduce(in, n, 0L, out);
    }

    /**
     * {@code out[0] = in[0] + ... + in[n-1] + addend[0]}; {@code out} must not be {@code in}, and may be
     * {@code addend}.
     */
    public void sumPlus(DeviceBuffer in, long n, DeviceBuffer addend, DeviceBuffer out) {
        requireInt32s(device, in, n, "sumPlus input");
        requireInt32s(device, addend, 1, "sumPlus addend");
        requireInt32s(device, out, 1, "sumPlus output");
        requireDistinct(device, out, in, n, "sumPlus output");
        reduce(in, n, addend.address(), out);
    }

    /**
     * {@code next[0] = state[0] + 1}, and {@code finished[0]} becomes 1 when {@code next[0] == stopAt}, else 0.
     * {@code state} and {@code next} may be the same buffer (the loop-back edge); {@code finished} is neither.
     */
    public void step(DeviceBuffer state, DeviceBuffer next, int stopAt, DeviceBuffer finished) {
        requireInt32s(device, state, 1, "step state");
        requireInt32s(device, next, 1, "step next");
        requireInt32s(device, finished, 1, "step finished flag");
        requireDistinct(device, finished, next, 1, "step finished flag");
        requireDistinct(device, finished, state, 1, "step finished flag");
        device.launch(step, 1, 1, state.address(), next.address(), unsigned(stopAt), finished.address());
    }

    /** Reads the flag {@link #step} wrote: waits for the work issued before it, then copies one int32 back. */
    public boolean isFinished(DeviceBuffer finished) {
        requireInt32s(device, finished, 1, "finished flag");
        flag.clear();
        device.copyToHost(finished, 0, flag);
        return flag.getInt(0) != 0;
    }

    private void elementwise(CUfunction kernel, DeviceBuffer in, DeviceBuffer out, long n, int value) {
        requireInt32s(device, in, n, "input");
        requireInt32s(device, out, n, "output");
        if (n == 0) {
            return;
        }
        device.launch(kernel, grid(n), BLOCK, in.address(), out.address(), unsigned(value), n);
    }

    /** Two launches in stream order: the target starts at the addend (or 0), then every block adds its partial. */
    private void reduce(DeviceBuffer in, long n, long addendAddress, DeviceBuffer out) {
        device.launch(sumInit, 1, 1, out.address(), addendAddress);
        if (n > 0) {
            device.launch(sumAccumulate, grid(n), BLOCK, in.address(), out.address(), n);
        }
    }

    static int grid(long n) {
        return (int) Math.max(1, Math.min(MAX_GRID, (n + BLOCK - 1) / BLOCK));
    }

    private static long unsigned(int value) {
        return value & 0xffffffffL;
    }

    static String ptx(String resource) {
        try (InputStream in = CounterCudaKernels.class.getResourceAsStream(resource)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
