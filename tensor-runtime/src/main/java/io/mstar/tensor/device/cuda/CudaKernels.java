package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The runtime's own kernels ({@code src/main/cuda/mstar_kernels.cu}), loaded as PTX into a {@link CudaDevice}.
 * The PTX is built by nvcc at build time; a build without nvcc has none, and {@link #available()} says so.
 * Launches are asynchronous on the device's stream; a fault surfaces at the next synchronizing call.
 */
public final class CudaKernels {

    static final String PTX_RESOURCE = "mstar_kernels.ptx";
    private static final int BLOCK = 256;
    private static final int MAX_GRID = 132 * 8;

    private final CudaDevice device;
    private final CUfunction fill;
    private final CUfunction scale;
    private final CUfunction poke;

    public CudaKernels(CudaDevice device) {
        String ptx = ptx();
        if (ptx == null) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "no PTX in this build (nvcc absent)");
        }
        this.device = device;
        CUmodule module = device.loadModule(ptx);
        this.fill = device.function(module, "mstar_fill_u32");
        this.scale = device.function(module, "mstar_scale_f32");
        this.poke = device.function(module, "mstar_poke_u32");
    }

    /** Whether this build carries the kernels' PTX. */
    public static boolean available() {
        return CudaKernels.class.getResource(PTX_RESOURCE) != null;
    }

    /** Sets {@code count} 32-bit words of {@code buffer} to {@code value}. */
    public void fill(DeviceBuffer buffer, int value, long count) {
        checkWords(buffer, count);
        device.launch(fill, grid(count), BLOCK, buffer.address(), value & 0xffffffffL, count);
    }

    /** Multiplies {@code count} floats of {@code buffer} by {@code factor} in place. */
    public void scale(DeviceBuffer buffer, float factor, long count) {
        checkWords(buffer, count);
        device.launch(scale, grid(count), BLOCK, buffer.address(), Float.floatToRawIntBits(factor) & 0xffffffffL, count);
    }

    /** Writes one word at any address: the faulting kernel the FATAL-path test needs. Not for production. */
    void poke(long address, int value) {
        device.launch(poke, 1, 1, address, value & 0xffffffffL);
    }

    private void checkWords(DeviceBuffer buffer, long count) {
        if (count < 0 || count > buffer.nbytes() / 4) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(),
                    count + " words do not fit in " + buffer);
        }
    }

    private static int grid(long count) {
        return (int) Math.max(1, Math.min(MAX_GRID, (count + BLOCK - 1) / BLOCK));
    }

    static String ptx() {
        try (InputStream in = CudaKernels.class.getResourceAsStream(PTX_RESOURCE)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
