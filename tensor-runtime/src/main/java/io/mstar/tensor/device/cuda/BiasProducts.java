package io.mstar.tensor.device.cuda;

import static org.bytedeco.cuda.global.cublas.CUBLASLT_EPILOGUE_BIAS;
import static org.bytedeco.cuda.global.cublas.CUBLASLT_MATMUL_DESC_BIAS_POINTER;
import static org.bytedeco.cuda.global.cublas.CUBLASLT_MATMUL_DESC_EPILOGUE;
import static org.bytedeco.cuda.global.cublas.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES;
import static org.bytedeco.cuda.global.cublas.cublasLtCreate;
import static org.bytedeco.cuda.global.cublas.cublasLtDestroy;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmul;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulAlgoGetHeuristic;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulDescCreate;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulDescDestroy;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulDescSetAttribute;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulPreferenceCreate;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulPreferenceDestroy;
import static org.bytedeco.cuda.global.cublas.cublasLtMatmulPreferenceSetAttribute;
import static org.bytedeco.cuda.global.cublas.cublasLtMatrixLayoutCreate;
import static org.bytedeco.cuda.global.cublas.cublasLtMatrixLayoutDestroy;
import static org.bytedeco.cuda.global.cudart.CUDA_R_32F;

import java.util.HashMap;
import java.util.Map;

import org.bytedeco.cuda.cublas.cublasLtContext;
import org.bytedeco.cuda.cublas.cublasLtMatmulDescOpaque_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulHeuristicResult_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulPreferenceOpaque_t;
import org.bytedeco.cuda.cublas.cublasLtMatrixLayoutOpaque_t;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;

/**
 * {@link CudaBlas#matmulBias}'s products on cuBLASLt, the bias added in the product's epilogue: the output is written
 * once, where a product and a bias kernel after it read and write it again. A plan (descriptors and the algorithm the
 * heuristic picks) is made at a shape's first product and kept for the handle's life; shapes are few (a model's
 * layers at its padded batch sizes). Used under the device's monitor by {@link CudaBlas}, with its workspace and
 * stream, so the products are ordered with everything else and can be captured into a graph.
 */
final class BiasProducts implements AutoCloseable {

    private record Shape(GemmPrecision precision, int m, int n, int k) {
    }

    private final CudaBlas blas;
    private final CUstream_st stream;
    private final Pointer workspace;
    private final long workspaceBytes;
    private final cublasLtContext handle = new cublasLtContext();
    private final Map<Shape, Plan> plans = new HashMap<>();
    private final LongPointer biasAddress = new LongPointer(1);
    private final FloatPointer one = new FloatPointer(1f);
    private final FloatPointer zero = new FloatPointer(0f);

    BiasProducts(CudaBlas blas, CUstream_st stream, Pointer workspace, long workspaceBytes) {
        this.blas = blas;
        this.stream = stream;
        this.workspace = workspace;
        this.workspaceBytes = workspaceBytes;
        blas.check(cublasLtCreate(handle), "cublasLtCreate");
    }

    /** Enqueues {@code out = a · w + bias} (row-major, as {@link CudaBlas#matmul}); operands checked by the caller. */
    void run(GemmPrecision precision, Pointer a, Pointer w, Pointer bias, Pointer out, int m, int n, int k) {
        Plan plan = plans.computeIfAbsent(new Shape(precision, m, n, k), Plan::new);
        biasAddress.put(0, bias.address());
        blas.check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, biasAddress, 8),
                "cublasLtMatmulDescSetAttribute(bias)");
        // column-major, as in CudaBlas#matmul: out^T[n, m] = w^T[n, k] · a^T[k, m]; the bias runs along n, D's rows
        blas.check(cublasLtMatmul(handle, plan.desc, one, w, plan.w, a, plan.a, zero, out, plan.out, out, plan.out,
                plan.heuristic.algo(), workspace, workspaceBytes, stream), "cublasLtMatmul(" + precision + ", " + m
                + "x" + n + "x" + k + ")");
    }

    @Override
    public void close() {
        plans.values().forEach(Plan::close);
        plans.clear();
        cublasLtDestroy(handle);
        biasAddress.close();
        one.close();
        zero.close();
    }

    /** One shape's descriptors and algorithm. */
    private final class Plan implements AutoCloseable {
        final cublasLtMatmulDescOpaque_t desc;
        final cublasLtMatrixLayoutOpaque_t w;
        final cublasLtMatrixLayoutOpaque_t a;
        final cublasLtMatrixLayoutOpaque_t out;
        final cublasLtMatmulHeuristicResult_t heuristic = new cublasLtMatmulHeuristicResult_t();

        /** Made whole or not at all: what a failure leaves made is destroyed before it propagates. */
        Plan(Shape s) {
            String shape = s.precision() + " " + s.m() + "x" + s.n() + "x" + s.k();
            desc = new cublasLtMatmulDescOpaque_t(created(p -> cublasLtMatmulDescCreate(p,
                    s.precision().computeType(), CUDA_R_32F), "cublasLtMatmulDescCreate"));
            try {
                w = layout(s.precision().operandType(), s.n(), s.k(), "w");
                a = layout(s.precision().operandType(), s.k(), s.m(), "a");
                out = layout(CUDA_R_32F, s.n(), s.m(), "out");
                try (IntPointer epilogue = new IntPointer(1).put(CUBLASLT_EPILOGUE_BIAS)) {
                    blas.check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, 4),
                            "cublasLtMatmulDescSetAttribute(epilogue)");
                }
                pickAlgorithm(shape);
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        private void pickAlgorithm(String shape) {
            cublasLtMatmulPreferenceOpaque_t preference = new cublasLtMatmulPreferenceOpaque_t(created(
                    p -> cublasLtMatmulPreferenceCreate(p), "cublasLtMatmulPreferenceCreate"));
            try (LongPointer bytes = new LongPointer(1).put(workspaceBytes); IntPointer found = new IntPointer(1)) {
                blas.check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        bytes, 8), "cublasLtMatmulPreferenceSetAttribute");
                blas.check(cublasLtMatmulAlgoGetHeuristic(handle, desc, w, a, out, out, preference, 1, heuristic,
                        found), "cublasLtMatmulAlgoGetHeuristic(" + shape + ")");
                if (found.get() < 1) {
                    throw new DeviceException(Reason.INVALID_ARGUMENT, blas.deviceName(), "cuBLASLt has no "
                            + "algorithm for a biased product of " + shape);
                }
            } finally {
                cublasLtMatmulPreferenceDestroy(preference);
            }
        }

        private cublasLtMatrixLayoutOpaque_t layout(int type, long rows, long cols, String what) {
            return new cublasLtMatrixLayoutOpaque_t(created(p -> cublasLtMatrixLayoutCreate(p, type, rows, cols, rows),
                    "cublasLtMatrixLayoutCreate(" + what + ")"));
        }

        private Pointer created(Creation creation, String operation) {
            try (PointerPointer<Pointer> handleOut = new PointerPointer<>(1)) {
                blas.check(creation.create(handleOut), operation);
                return handleOut.get(0);
            }
        }

        @Override
        public void close() {
            for (cublasLtMatrixLayoutOpaque_t l : new cublasLtMatrixLayoutOpaque_t[] {w, a, out}) {
                if (l != null) {
                    cublasLtMatrixLayoutDestroy(l);
                }
            }
            cublasLtMatmulDescDestroy(desc);
            heuristic.close();
        }
    }

    private interface Creation {
        int create(PointerPointer<Pointer> out);
    }
}
