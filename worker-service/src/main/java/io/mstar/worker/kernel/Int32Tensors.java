package io.mstar.worker.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import io.mstar.tensor.device.Device;

/**
 * Moving {@code int32} tensors between Java arrays and a device: what host kernels and tests compute with.
 * Little-endian, as every tensor's bytes are.
 */
public final class Int32Tensors {

    public static final String DTYPE = "int32";

    private Int32Tensors() {
    }

    /** The values of a one-dimensional (or any contiguous) {@code int32} tensor. */
    public static int[] read(Device device, Tensor tensor) {
        if (!DTYPE.equals(tensor.dtype())) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "expected int32, got " + tensor.dtype());
        }
        int n = Math.toIntExact(tensor.elementCount());
        ByteBuffer bytes = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        if (n > 0) {
            device.copyToHost(tensor.buffer(), 0, bytes);
        }
        int[] values = new int[n];
        bytes.asIntBuffer().get(values);
        return values;
    }

    /** A fresh one-dimensional tensor on {@code device} holding {@code values}; the caller owns it. */
    public static Tensor write(Device device, int[] values) {
        return new Tensor(DeviceUploads.ints(device, values), DTYPE, List.of((long) values.length));
    }
}
