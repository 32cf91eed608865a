package io.mstar.worker.kernel;

import java.util.ArrayList;
import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/** Device buffers that one owner (a model's weights, its working buffers) frees together, each exactly once. */
public final class OwnedBuffers implements AutoCloseable {

    private final Device device;
    private final List<DeviceBuffer> owned = new ArrayList<>();

    public OwnedBuffers(Device device) {
        this.device = device;
    }

    /** A new buffer of {@code bytes} (at least 1), owned from now on. */
    public DeviceBuffer allocate(long bytes) {
        return own(device.allocate(Math.max(1, bytes)));
    }

    /** Takes {@code buffer} over: it is freed with the others. */
    public DeviceBuffer own(DeviceBuffer buffer) {
        owned.add(buffer);
        return buffer;
    }

    /** Frees every buffer once; idempotent. */
    @Override
    public void close() {
        for (DeviceBuffer b : owned) {
            device.free(b);
        }
        owned.clear();
    }
}
