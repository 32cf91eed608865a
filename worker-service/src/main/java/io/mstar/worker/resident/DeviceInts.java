package io.mstar.worker.resident;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/** int32 cells of device buffers read and written through the device's copies: what host steps compute with. */
public final class DeviceInts {

    private final Device device;

    public DeviceInts(Device device) {
        this.device = device;
    }

    /** {@code count} ints of {@code buffer} from int {@code at}. */
    public int[] read(DeviceBuffer buffer, int at, int count) {
        ByteBuffer b = ByteBuffer.allocateDirect(count * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        if (count > 0) {
            device.copyToHost(buffer, (long) at * Integer.BYTES, b);
        }
        int[] out = new int[count];
        b.asIntBuffer().get(out);
        return out;
    }

    /** {@code values} into {@code buffer} from int {@code at}. */
    public void write(DeviceBuffer buffer, int at, int[] values) {
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        device.copyFromHost(b, buffer, (long) at * Integer.BYTES);
    }
}
