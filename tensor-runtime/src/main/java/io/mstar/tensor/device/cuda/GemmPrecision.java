package io.mstar.tensor.device.cuda;

import static org.bytedeco.cuda.global.cublas.CUBLAS_COMPUTE_32F;
import static org.bytedeco.cuda.global.cublas.CUBLAS_COMPUTE_32F_FAST_TF32;
import static org.bytedeco.cuda.global.cudart.CUDA_R_16BF;
import static org.bytedeco.cuda.global.cudart.CUDA_R_32F;

/**
 * How a {@link CudaBlas} matrix product multiplies: its operands' element type and cuBLAS's compute type. The
 * product is always accumulated and written in FP32.
 */
public enum GemmPrecision {
    /** FP32 operands, FP32 arithmetic (no tensor cores): the reference, as PyTorch with TF32 off. */
    FP32(4),
    /** FP32 operands rounded to TF32 (10-bit mantissa) on the tensor cores. */
    TF32(4),
    /** BF16 operands (8-bit mantissa) on the tensor cores; the caller stores them as BF16. */
    BF16(2);

    private final int operandBytes;

    GemmPrecision(int operandBytes) {
        this.operandBytes = operandBytes;
    }

    /** Bytes of one operand element. */
    public int operandBytes() {
        return operandBytes;
    }

    /** {@code v} rounded to BF16 (to nearest, ties to even), as the bits a BF16 operand holds. */
    public static short bf16(float v) {
        int bits = Float.floatToRawIntBits(v);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (short) ((bits >>> 16) | 0x40);  // a NaN stays a (quiet) NaN
        }
        return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
    }

    int operandType() {
        return this == BF16 ? CUDA_R_16BF : CUDA_R_32F;
    }

    int computeType() {
        return this == TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    }
}
