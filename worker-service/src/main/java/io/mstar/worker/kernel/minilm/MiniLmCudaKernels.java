package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.cuda.CudaBlas;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.GemmPrecision;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The encoder's CUDA kernels ({@code src/main/cuda/minilm_kernels.cu}, PTX built by nvcc), each the twin of a
 * {@link MiniLmHostKernels} method with the same operands as device buffers. Launches are asynchronous on the
 * device's stream; sizes are checked on the host first (INVALID_ARGUMENT, nothing launched). Owned by the engine
 * loop, like the device.
 */
public final class MiniLmCudaKernels {

    private static final Logger log = LoggerFactory.getLogger(MiniLmCudaKernels.class);

    static final String PTX_RESOURCE = "minilm_kernels.ptx";
    static final String NO_PTX_REASON = "minilm CUDA kernels unavailable: this build has no PTX (nvcc was not on the PATH)";
    static final List<String> KERNELS = List.of("minilm_embeddings", "minilm_gemm_bias", "minilm_add_layer_norm",
            "minilm_attention", "minilm_mean_pool_normalize", "minilm_bias_act");

    private static final int ELEMENTWISE_BLOCK = 256;
    private static final int MAX_GRID = 132 * 8;
    /** Output tile of one GEMM block ({@code GEMM_BM x GEMM_BN} in the .cu file). */
    private static final int GEMM_TILE_ROWS = 128;
    private static final int GEMM_TILE_COLS = 64;
    private static final int GEMM_THREADS = 256;
    private static final int NORM_THREADS = 128;
    private static final int MAX_NORM_WIDTH = 1024;
    /** Query rows of one attention block (ATT_WARPS x ATT_ROWS in the .cu file). */
    private static final int ATTENTION_ROWS = 16;
    private static final int ATTENTION_THREADS = 128;
    private static final int MAX_HEAD_DIM = 128;

    private final CudaDevice device;
    private final CUfunction embeddings;
    private final CUfunction gemm;
    private final CUfunction layerNorm;
    private final CUfunction attention;
    private final CUfunction pool;
    private final CUfunction biasAct;
    /** cuBLAS when its libraries load here, else null: products then run on {@code minilm_gemm_bias}, FP32 only. */
    private final CudaBlas blas;

    public MiniLmCudaKernels(CudaDevice device) {
        String ptx = ptx();
        if (ptx == null) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), NO_PTX_REASON);
        }
        this.device = device;
        CUmodule module = device.loadModule(ptx);
        this.embeddings = device.function(module, KERNELS.get(0));
        this.gemm = device.function(module, KERNELS.get(1));
        this.layerNorm = device.function(module, KERNELS.get(2));
        this.attention = device.function(module, KERNELS.get(3));
        this.pool = device.function(module, KERNELS.get(4));
        this.biasAct = device.function(module, KERNELS.get(5));
        Optional<String> noBlas = CudaBlas.unavailableReason();
        noBlas.ifPresent(reason -> log.warn("minilm on {}: {}; its products run on the hand-written SGEMM (FP32 only, "
                + "about 3x slower)", device.name(), reason));
        this.blas = noBlas.isEmpty() ? device.blas() : null;
    }

    /** Whether this build carries the kernels' PTX (a GPU is still needed to run them). */
    public static boolean available() {
        return unavailableReason().isEmpty();
    }

    public static Optional<String> unavailableReason() {
        return MiniLmCudaKernels.class.getResource(PTX_RESOURCE) == null ? Optional.of(NO_PTX_REASON) : Optional.empty();
    }

    public CudaDevice device() {
        return device;
    }

    /** Whether products run on cuBLAS (else on the hand-written SGEMM, which is FP32 only). */
    public boolean usesCublas() {
        return blas != null;
    }

    /**
     * A linear layer, {@code out = a[m, k] w[k, n] + bias}, GELU after when asked; with {@code out16} the result goes
     * there as BF16 instead. On cuBLAS in {@code precision} ({@code a} and {@code w} then hold that precision's
     * elements; without GELU or a copy the bias is added in cuBLASLt's epilogue), else on {@link #gemm}.
     */
    public void linear(GemmPrecision precision, DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer out,
            int m, int n, int k, boolean gelu, DeviceBuffer out16) {
        if (blas == null) {
            if (precision != GemmPrecision.FP32 || out16 != null) {
                throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), precision
                        + " products need cuBLAS, which is unavailable here");
            }
            gemm(a, w, bias, out, m, n, k, gelu);
            return;
        }
        if (!gelu && out16 == null) {
            blas.matmulBias(precision, a, w, bias, out, m, n, k);
            return;
        }
        blas.matmul(precision, a, w, out, m, n, k);
        biasAct(out, bias, m, n, gelu, out16);
    }

    /**
     * {@code out[r, c] += bias[c]}, then GELU when asked, in place; with {@code out16} the result goes there as BF16
     * instead, and {@code out} keeps the product (a BF16 encoder reads only the copy).
     */
    public void biasAct(DeviceBuffer out, DeviceBuffer bias, int rows, int n, boolean gelu, DeviceBuffer out16) {
        require(out, (long) rows * n, "bias out");
        require(bias, n, "bias");
        require16(out16, (long) rows * n, "bias out16");
        if ((long) rows * n > Integer.MAX_VALUE) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "bias over " + rows + " x " + n
                    + " values: the kernel takes fewer than 2^31");
        }
        if (rows == 0) {
            return;
        }
        device.launch(biasAct, grid((long) rows * n), ELEMENTWISE_BLOCK, out.address(), bias.address(), rows, n,
                gelu ? 1 : 0, address(out16));
    }

    /** {@link MiniLmHostKernels#embeddings}: {@code ids} int32 [rows], {@code out} [rows, hidden]. */
    public void embeddings(DeviceBuffer ids, int rows, int length, int hidden, DeviceBuffer word, DeviceBuffer position,
            DeviceBuffer tokenType, DeviceBuffer out) {
        require(ids, rows, "ids");
        require(position, (long) length * hidden, "position embeddings");
        require(tokenType, hidden, "token type embedding");
        require(out, (long) rows * hidden, "embeddings out");
        device.launch(embeddings, grid((long) rows * hidden), ELEMENTWISE_BLOCK, ids.address(), rows, length, hidden,
                word.address(), position.address(), tokenType.address(), out.address());
    }

    /** {@link MiniLmHostKernels#gemm}: {@code out = a[m, k] w[k, n] + bias}, GELU after when asked. */
    public void gemm(DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer out, int m, int n, int k,
            boolean gelu) {
        require(a, (long) m * k, "gemm a");
        require(w, (long) k * n, "gemm w");
        require(bias, n, "gemm bias");
        require(out, (long) m * n, "gemm out");
        int tiles = ((m + GEMM_TILE_ROWS - 1) / GEMM_TILE_ROWS) * ((n + GEMM_TILE_COLS - 1) / GEMM_TILE_COLS);
        device.launch(gemm, tiles, GEMM_THREADS, a.address(), w.address(), bias.address(), out.address(), m, n, k,
                gelu ? 1 : 0);
    }

    /** {@link MiniLmHostKernels#addLayerNorm}; {@code residual} may be null. */
    public void addLayerNorm(DeviceBuffer x, DeviceBuffer residual, DeviceBuffer gamma, DeviceBuffer beta,
            DeviceBuffer out, int rows, int width, float eps) {
        addLayerNorm(x, residual, gamma, beta, out, rows, width, eps, null);
    }

    /** {@link #addLayerNorm}, and a BF16 copy of {@code out} into {@code out16} unless it is null. */
    public void addLayerNorm(DeviceBuffer x, DeviceBuffer residual, DeviceBuffer gamma, DeviceBuffer beta,
            DeviceBuffer out, int rows, int width, float eps, DeviceBuffer out16) {
        if (width > MAX_NORM_WIDTH) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "LayerNorm width " + width + " > "
                    + MAX_NORM_WIDTH);
        }
        require(x, (long) rows * width, "layer norm x");
        if (residual != null) {
            require(residual, (long) rows * width, "layer norm residual");
        }
        require(gamma, width, "gamma");
        require(beta, width, "beta");
        require(out, (long) rows * width, "layer norm out");
        require16(out16, (long) rows * width, "layer norm out16");
        if (rows == 0) {
            return;
        }
        device.launch(layerNorm, rows, NORM_THREADS, x.address(), residual == null ? 0L : residual.address(),
                gamma.address(), beta.address(), out.address(), width, bits(eps), address(out16));
    }

    /** {@link MiniLmHostKernels#attention}; {@code lengths} int32 [batch]. */
    public void attention(DeviceBuffer qkv, DeviceBuffer lengths, int batch, int length, int heads, int headDim,
            DeviceBuffer out) {
        attention(qkv, lengths, batch, length, heads, headDim, out, null);
    }

    /** {@link #attention}, and a BF16 copy of {@code out} into {@code out16} unless it is null. */
    public void attention(DeviceBuffer qkv, DeviceBuffer lengths, int batch, int length, int heads, int headDim,
            DeviceBuffer out, DeviceBuffer out16) {
        if (headDim > MAX_HEAD_DIM || headDim % 4 != 0) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "attention heads of width " + headDim
                    + ": the kernel takes multiples of 4 up to " + MAX_HEAD_DIM);
        }
        long rows = (long) batch * length;
        require(qkv, rows * 3 * heads * headDim, "qkv");
        require(lengths, batch, "lengths");
        require(out, rows * heads * headDim, "attention out");
        require16(out16, rows * heads * headDim, "attention out16");
        int qBlocks = (length + ATTENTION_ROWS - 1) / ATTENTION_ROWS;
        if (batch == 0) {
            return;
        }
        device.launch(attention, batch * heads * qBlocks, ATTENTION_THREADS, qkv.address(), lengths.address(), length,
                heads, headDim, bits((float) (1 / Math.sqrt(headDim))), out.address(), address(out16));
    }

    /** {@link MiniLmHostKernels#meanPoolNormalize}; {@code out} [batch, width]. */
    public void meanPoolNormalize(DeviceBuffer hidden, DeviceBuffer lengths, int batch, int length, int width,
            DeviceBuffer out) {
        if (width > 8 * NORM_THREADS) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "pooling width " + width + " > "
                    + 8 * NORM_THREADS);
        }
        require(hidden, (long) batch * length * width, "pool hidden");
        require(lengths, batch, "lengths");
        require(out, (long) batch * width, "pool out");
        if (batch == 0) {
            return;
        }
        device.launch(pool, batch, NORM_THREADS, hidden.address(), lengths.address(), length, width, out.address());
    }

    private void require(DeviceBuffer buffer, long words, String what) {
        if (words < 0 || words * 4 > buffer.nbytes()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), what + ": " + words
                    + " 32-bit words do not fit in " + buffer);
        }
    }

    /** An optional BF16 output of {@code elements}: null, or a buffer big enough. */
    private void require16(DeviceBuffer out16, long elements, String what) {
        if (out16 != null && elements * 2 > out16.nbytes()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), what + ": " + elements
                    + " BF16 values do not fit in " + out16);
        }
    }

    private static long address(DeviceBuffer optional) {
        return optional == null ? 0L : optional.address();
    }

    private static long bits(float f) {
        return Float.floatToRawIntBits(f) & 0xffffffffL;
    }

    private static int grid(long n) {
        return (int) Math.max(1, Math.min(MAX_GRID, (n + ELEMENTWISE_BLOCK - 1) / ELEMENTWISE_BLOCK));
    }

    private static String ptx() {
        try (InputStream in = MiniLmCudaKernels.class.getResourceAsStream(PTX_RESOURCE)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
