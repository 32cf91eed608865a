package io.mstar.worker.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.Transfer;

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

    /**
     * The values of each {@code int32} tensor, read in one batch ({@link Device#copyToHost(List)}): on a GPU one wait
     * for all of them instead of one each.
     */
    public static List<int[]> readAll(Device device, List<Tensor> tensors) {
        List<Transfer> transfers = new ArrayList<>(tensors.size());
        for (Tensor t : tensors) {
            if (!DTYPE.equals(t.dtype())) {
                throw new KernelException(KernelException.Reason.BAD_INPUT, "expected int32, got " + t.dtype());
            }
            int n = Math.toIntExact(t.elementCount());
            transfers.add(Transfer.of(t.buffer(), ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN)));
        }
        device.copyToHost(transfers);
        List<int[]> values = new ArrayList<>(tensors.size());
        for (Transfer t : transfers) {
            int[] v = new int[t.host().remaining() / 4];
            t.host().asIntBuffer().get(v);
            values.add(v);
        }
        return values;
    }

    /** A fresh one-dimensional tensor on {@code device} holding {@code values}; the caller owns it. */
    public static Tensor write(Device device, int[] values) {
        return new Tensor(DeviceUploads.ints(device, values), DTYPE, List.of((long) values.length));
    }
}
