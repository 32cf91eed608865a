package io.mstar.worker.kernel;

import java.util.List;
import java.util.Objects;

import io.mstar.tensor.device.DeviceBuffer;

/**
 * A tensor as a kernel sees it: a device buffer with its element type and shape (contiguous, row-major).
 * Whoever holds the buffer is said where it is handed over: inputs stay the engine's, outputs become the engine's.
 *
 * @param buffer the bytes, on the kernel's device
 * @param dtype  element type name as on the wire ({@code int32}, {@code bfloat16})
 * @param dims   shape, outermost first
 */
public record Tensor(DeviceBuffer buffer, String dtype, List<Long> dims) {

    public Tensor {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(dtype, "dtype");
        dims = List.copyOf(dims);
    }

    /** Number of elements (1 for a scalar, 0 for an empty tensor). */
    public long elementCount() {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }

    /** Row-major strides in elements, as descriptors carry them. */
    public List<Long> contiguousStride() {
        Long[] stride = new Long[dims.size()];
        long step = 1;
        for (int i = dims.size() - 1; i >= 0; i--) {
            stride[i] = step;
            step *= dims.get(i);
        }
        return List.of(stride);
    }
}
