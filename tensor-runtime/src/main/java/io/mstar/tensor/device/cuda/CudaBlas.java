package io.mstar.tensor.device.cuda;

import static org.bytedeco.cuda.global.cublas.CUBLAS_GEMM_DEFAULT;
import static org.bytedeco.cuda.global.cublas.CUBLAS_OP_N;
import static org.bytedeco.cuda.global.cublas.CUBLAS_STATUS_SUCCESS;
import static org.bytedeco.cuda.global.cublas.cublasCreate_v2;
import static org.bytedeco.cuda.global.cublas.cublasDestroy_v2;
import static org.bytedeco.cuda.global.cublas.cublasGemmEx;
import static org.bytedeco.cuda.global.cublas.cublasGetStatusString;
import static org.bytedeco.cuda.global.cublas.cublasSetStream_v2;
import static org.bytedeco.cuda.global.cublas.cublasSetWorkspace_v2;

import java.util.Optional;

import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;

/**
 * cuBLAS on a {@link CudaDevice}, through the JavaCPP CUDA presets (docs/tensor-runtime.md#cublas). One handle per
 * device, bound to the device's primary context (JCuda's, which the runtime API that cuBLAS uses adopts as current)
 * and issuing on the device's one stream, so its products are ordered with every launch and copy and can be
 * captured into a {@link CudaGraph}. Its workspace is a buffer of the device's own, so that cuBLAS never allocates
 * while a graph is captured. Calls take the device's monitor, like the device's own operations.
 */
public final class CudaBlas implements AutoCloseable {

    /** cuBLAS's recommended workspace on Hopper. */
    static final long WORKSPACE_BYTES = 32L << 20;

    private final CudaDevice device;
    private final cublasContext handle = new cublasContext();
    private final DeviceBuffer workspace;
    private final BiasProducts biased;
    private final FloatPointer one = new FloatPointer(1f);
    private final FloatPointer zero = new FloatPointer(0f);
    private boolean closed;

    /** Called by {@link CudaDevice#blas()} under its monitor, with its context current. */
    CudaBlas(CudaDevice device, long stream) {
        Optional<String> missing = unavailableReason();
        if (missing.isPresent()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), missing.get());
        }
        this.device = device;
        check(cublasCreate_v2(handle), "cublasCreate");
        try {
            CUstream_st onStream = new CUstream_st(new Address(stream));
            check(cublasSetStream_v2(handle, onStream), "cublasSetStream");
            workspace = device.allocate(WORKSPACE_BYTES);
            try {
                check(cublasSetWorkspace_v2(handle, new Address(workspace.address()), WORKSPACE_BYTES),
                        "cublasSetWorkspace");
                // one stream orders the two handles' products, so they share the workspace
                biased = new BiasProducts(this, onStream, new Address(workspace.address()), WORKSPACE_BYTES);
            } catch (RuntimeException e) {
                device.free(workspace);
                throw e;
            }
        } catch (RuntimeException e) {
            cublasDestroy_v2(handle);
            throw e;
        }
    }

    /**
     * Whether cuBLAS's libraries load on this machine (libcublas.so.13, libcublasLt.so.13 and libcudart.so.13 on the
     * library path); the reason when they do not. Asked once per process.
     */
    public static Optional<String> unavailableReason() {
        return Availability.REASON;
    }

    /**
     * {@code out[m, n] = a[m, k] · w[k, n]}, all row-major, accumulated in FP32 and written as FP32; {@code a} and
     * {@code w} hold {@link GemmPrecision#operandBytes()}-byte elements. Asynchronous on the device's stream.
     */
    public void matmul(GemmPrecision precision, DeviceBuffer a, DeviceBuffer w, DeviceBuffer out, int m, int n, int k) {
        synchronized (device) {
            ensureOpen();
            require(a, (long) m * k * precision.operandBytes(), "matmul a");
            require(w, (long) k * n * precision.operandBytes(), "matmul w");
            require(out, (long) m * n * 4, "matmul out");
            if (m == 0 || n == 0) {
                return;
            }
            device.bind();
            // row-major out = a w is column-major out^T = w^T a^T: the same bytes, operands swapped
            check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, one, address(w), precision.operandType(), n,
                    address(a), precision.operandType(), k, zero, address(out), org.bytedeco.cuda.global.cudart.CUDA_R_32F,
                    n, precision.computeType(), CUBLAS_GEMM_DEFAULT), "cublasGemmEx(" + precision + ", " + m + "x" + n
                    + "x" + k + ")");
        }
    }

    /**
     * {@code out[m, n] = a[m, k] · w[k, n] + bias[n]}, as {@link #matmul} with the FP32 {@code bias} added in
     * cuBLASLt's epilogue: {@code out} is written once. Asynchronous on the device's stream.
     */
    public void matmulBias(GemmPrecision precision, DeviceBuffer a, DeviceBuffer w, DeviceBuffer bias,
            DeviceBuffer out, int m, int n, int k) {
        synchronized (device) {
            ensureOpen();
            require(a, (long) m * k * precision.operandBytes(), "matmul a");
            require(w, (long) k * n * precision.operandBytes(), "matmul w");
            require(bias, (long) n * 4, "matmul bias");
            require(out, (long) m * n * 4, "matmul out");
            if (k < 1) {
                throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "a biased product needs k >= 1, got "
                        + k);
            }
            if (m == 0 || n == 0) {
                return;
            }
            device.bind();
            biased.run(precision, address(a), address(w), address(bias), address(out), m, n, k);
        }
    }

    /** Destroys the handle and frees the workspace; idempotent. Called by the device before its stream goes. */
    @Override
    public void close() {
        synchronized (device) {
            if (closed) {
                return;
            }
            closed = true;
            device.bind();
            biased.close();
            cublasDestroy_v2(handle);
            device.free(workspace);
            one.close();
            zero.close();
        }
    }

    private Pointer address(DeviceBuffer b) {
        if (!(b instanceof CudaBuffer c) || c.device() != device) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "buffer " + b + " is not on " + device.name());
        }
        return new Address(c.address());
    }

    private void require(DeviceBuffer b, long bytes, String what) {
        if (bytes < 0 || bytes > b.nbytes()) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), what + ": " + bytes
                    + " bytes do not fit in " + b);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new DeviceException(Reason.INVALID_ARGUMENT, device.name(), "cuBLAS handle is closed");
        }
    }

    String deviceName() {
        return device.name();
    }

    void check(int status, String operation) {
        if (status != CUBLAS_STATUS_SUCCESS) {
            // a failed product leaves the context usable: the request fails, the device stays
            throw new DeviceException(Reason.LAUNCH_FAILED, device.name(), operation + ": "
                    + cublasGetStatusString(status).getString());
        }
    }

    /** A JavaCPP pointer at a numeric address (device memory, a stream handle), owning nothing. */
    static final class Address extends Pointer {
        Address(long address) {
            super((Pointer) null);
            this.address = address;
        }
    }

    /** The libraries' load result, computed once when first asked (class initialization is thread-safe). */
    private static final class Availability {
        static final Optional<String> REASON = load();

        private static Optional<String> load() {
            try {
                Loader.load(cublas.class);
                return Optional.empty();
            } catch (UnsatisfiedLinkError | NoClassDefFoundError | ExceptionInInitializerError e) {
                return Optional.of("cuBLAS unavailable: " + e + " (put the folders of libcublas.so.13, libcublasLt.so.13 "
                        + "and libcudart.so.13 on LD_LIBRARY_PATH)");
            }
        }
    }
}
