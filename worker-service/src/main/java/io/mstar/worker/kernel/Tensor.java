package io.mstar.worker.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;

import io.mstar.tensor.device.DeviceBuffer;

/**
 * A tensor as a kernel sees it: a device buffer with its element type and shape (contiguous, row-major).
 * Whoever holds the buffer is said where it is handed over: inputs stay the engine's, outputs become the engine's.
 *
 * <p>A tensor made from host values (sampled tokens, a codec's samples) may carry those bytes as its host copy: the
 * store keeps it alongside ({@code cpu_tensor}), and whoever needs the bytes on the host (an inline result, a
 * publish, the next kernel's read) takes them from there instead of waiting for the device, which on a GPU would
 * also wait for whatever step runs on its stream by then.
 *
 * @param buffer the bytes, on the kernel's device
 * @param dtype  element type name as on the wire ({@code int32}, {@code bfloat16})
 * @param dims   shape, outermost first
 * @param host   the same bytes on the host, or null; never written after the tensor is made
 */
public record Tensor(DeviceBuffer buffer, String dtype, List<Long> dims, ByteBuffer host) {

    public Tensor {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(dtype, "dtype");
        dims = List.copyOf(dims);
        if (host != null) {
            if (host.remaining() != buffer.nbytes()) {
                throw new IllegalArgumentException("host copy of " + host.remaining() + " bytes for a tensor of "
                        + buffer.nbytes());
            }
            host = host.slice().asReadOnlyBuffer();
        }
    }

    private static final List<Long> UNIT_STRIDE = List.of(1L);

    /** A tensor without a host copy. */
    public Tensor(DeviceBuffer buffer, String dtype, List<Long> dims) {
        this(buffer, dtype, dims, null);
    }

    /** A little-endian view of the host copy from its first byte, or null when there is none. */
    @Override
    public ByteBuffer host() {
        return host == null ? null : host.duplicate().order(ByteOrder.LITTLE_ENDIAN);
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
        if (dims.size() <= 1) {
            return dims.isEmpty() ? List.of() : UNIT_STRIDE; // a step's tokens: every output, every request
        }
        Long[] stride = new Long[dims.size()];
        long step = 1;
        for (int i = dims.size() - 1; i >= 0; i--) {
            stride[i] = step;
            step *= dims.get(i);
        }
        return List.of(stride);
    }
}
