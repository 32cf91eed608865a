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

    /** The values of a one-dimensional (or any contiguous) {@code int32} tensor, from its host copy if it has one. */
    public static int[] read(Device device, Tensor tensor) {
        if (!DTYPE.equals(tensor.dtype())) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "expected int32, got " + tensor.dtype());
        }
        int n = Math.toIntExact(tensor.elementCount());
        int[] values = new int[n];
        ByteBuffer host = tensor.host();
        if (host != null) {
            host.asIntBuffer().get(values);
            return values;
        }
        ByteBuffer bytes = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        if (n > 0) {
            device.copyToHost(tensor.buffer(), 0, bytes);
        }
        bytes.asIntBuffer().get(values);
        return values;
    }

    /**
     * The values of each {@code int32} tensor: from its host copy, or else read in one batch
     * ({@link Device#copyToHost(List)}): on a GPU one wait for all of them instead of one each.
     */
    public static List<int[]> readAll(Device device, List<Tensor> tensors) {
        List<Transfer> transfers = new ArrayList<>(tensors.size());
        List<ByteBuffer> hosts = new ArrayList<>(tensors.size());
        for (Tensor t : tensors) {
            if (!DTYPE.equals(t.dtype())) {
                throw new KernelException(KernelException.Reason.BAD_INPUT, "expected int32, got " + t.dtype());
            }
            ByteBuffer host = t.host();
            if (host == null) {
                host = ByteBuffer.allocate(Math.toIntExact(t.elementCount()) * 4).order(ByteOrder.LITTLE_ENDIAN);
                transfers.add(Transfer.of(t.buffer(), host));
            }
            hosts.add(host);
        }
        if (!transfers.isEmpty()) {
            device.copyToHost(transfers);
        }
        List<int[]> values = new ArrayList<>(tensors.size());
        for (ByteBuffer host : hosts) {
            int[] v = new int[host.remaining() / 4];
            host.asIntBuffer().get(v);
            values.add(v);
        }
        return values;
    }

    /** A fresh one-dimensional tensor on {@code device} holding {@code values}, and them as its host copy. */
    public static Tensor write(Device device, int[] values) {
        ByteBuffer bytes = ByteBuffer.allocate(values.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asIntBuffer().put(values);
        return new Tensor(DeviceUploads.upload(device, bytes.duplicate()), DTYPE, List.of((long) values.length),
                bytes);
    }
}
