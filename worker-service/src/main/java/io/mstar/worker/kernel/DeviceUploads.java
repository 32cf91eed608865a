package io.mstar.worker.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * Host arrays into fresh device buffers, little-endian as every tensor's bytes are. The caller owns the buffer; a
 * copy that fails frees it first, so nothing leaks on the way out.
 */
public final class DeviceUploads {

    private DeviceUploads() {
    }

    public static DeviceBuffer ints(Device device, int[] values) {
        ByteBuffer bytes = direct(values.length * Integer.BYTES);
        bytes.asIntBuffer().put(values);
        return upload(device, bytes);
    }

    public static DeviceBuffer floats(Device device, float[] values) {
        ByteBuffer bytes = direct(values.length * Float.BYTES);
        bytes.asFloatBuffer().put(values);
        return upload(device, bytes);
    }

    public static DeviceBuffer shorts(Device device, short[] values) {
        ByteBuffer bytes = direct(values.length * Short.BYTES);
        bytes.asShortBuffer().put(values);
        return upload(device, bytes);
    }

    /** A buffer of {@code bytes.capacity()} bytes holding {@code bytes}; an empty one is allocated, never copied. */
    public static DeviceBuffer upload(Device device, ByteBuffer bytes) {
        DeviceBuffer buffer = device.allocate(bytes.capacity());
        try {
            if (bytes.capacity() > 0) {
                device.copyFromHost(bytes, buffer, 0);
            }
        } catch (RuntimeException e) {
            device.free(buffer);
            throw e;
        }
        return buffer;
    }

    private static ByteBuffer direct(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
    }
}
