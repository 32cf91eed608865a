package io.mstar.worker.kernel.cuda;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The counter kernels' arithmetic in plain Java on {@link HostDevice} buffers: the expected side of the GPU
 * comparisons. Java's {@code int} wraps modulo 2^32, which is what the kernels promise.
 */
final class HostCounterReference {

    private final HostDevice host;

    HostCounterReference(HostDevice host) {
        this.host = host;
    }

    void addScalar(DeviceBuffer in, DeviceBuffer out, int n, int value) {
        int[] v = read(host, in, n);
        for (int i = 0; i < n; i++) {
            v[i] += value;
        }
        write(host, v, out);
    }

    void mulScalar(DeviceBuffer in, DeviceBuffer out, int n, int value) {
        int[] v = read(host, in, n);
        for (int i = 0; i < n; i++) {
            v[i] *= value;
        }
        write(host, v, out);
    }

    void sumPlus(DeviceBuffer in, int n, int addend, DeviceBuffer out) {
        int sum = addend;
        for (int x : read(host, in, n)) {
            sum += x;
        }
        write(host, new int[] {sum}, out);
    }

    /** Returns the finish flag the kernel would raise. */
    boolean step(DeviceBuffer state, DeviceBuffer next, int stopAt) {
        int v = read(host, state, 1)[0] + 1;
        write(host, new int[] {v}, next);
        return v == stopAt;
    }

    static int[] read(Device device, DeviceBuffer buffer, int n) {
        ByteBuffer bytes = ByteBuffer.allocate(4 * n).order(ByteOrder.nativeOrder());
        device.copyToHost(buffer, 0, bytes);
        int[] v = new int[n];
        bytes.asIntBuffer().get(v);
        return v;
    }

    static void write(Device device, int[] values, DeviceBuffer buffer) {
        ByteBuffer bytes = ByteBuffer.allocate(4 * values.length).order(ByteOrder.nativeOrder());
        bytes.asIntBuffer().put(values);
        device.copyFromHost(bytes, buffer, 0);
    }

    static byte[] bytes(Device device, DeviceBuffer buffer) {
        byte[] b = new byte[(int) buffer.nbytes()];
        device.copyToHost(buffer, 0, ByteBuffer.wrap(b));
        return b;
    }
}
