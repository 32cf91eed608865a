package io.mstar.tensor;

import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/** What {@link TensorStore#snapshot} reports of the tensors held, counted in one walk over them. */
final class StoreCensus {

    long owned;
    long awaitingAck;
    long persisted;
    long hostCopyBytes;
    /** Bytes per device, by identity: a worker has one or two, so no name is hashed per tensor. */
    private final Map<Device, long[]> bytes = new IdentityHashMap<>();

    void count(TensorState state, DeviceBuffer buffer, ByteBuffer cpu) {
        switch (state) {
            case OWNED -> owned++;
            case AWAITING_ACK -> awaitingAck++;
            case PERSISTED -> persisted++;
        }
        bytes.computeIfAbsent(buffer.device(), d -> new long[1])[0] += buffer.nbytes();
        hostCopyBytes += cpu == null ? 0 : cpu.capacity();
    }

    /** Bytes of the buffers counted, by device name (sorted). */
    Map<String, Long> bytesByDevice() {
        Map<String, Long> out = new TreeMap<>();
        bytes.forEach((device, n) -> out.merge(device.name(), n[0], Long::sum));
        return out;
    }
}
