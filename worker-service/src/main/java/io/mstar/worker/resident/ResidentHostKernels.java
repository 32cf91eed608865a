package io.mstar.worker.resident;

import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * {@link ResidentKernels} on a host device: the same reads and writes of the device tables as the CUDA kernels, done
 * through the device's copies when a host step replays.
 */
final class ResidentHostKernels implements ResidentKernels {

    private final DeviceInts ints;
    private final List<ResidentTable> tables;
    private final int maxRows;

    ResidentHostKernels(Device device, List<ResidentTable> tables, int maxRows) {
        this.ints = new DeviceInts(device);
        this.tables = List.copyOf(tables);
        this.maxRows = maxRows;
    }

    @Override
    public void apply(DeviceBuffer upload) {
        int runs = ints(upload, ResidentUpload.RUNS, 1)[0];
        int[] records = ints(upload, ResidentUpload.SLOTS + maxRows, runs * ResidentUpload.RUN_INTS);
        for (int r = 0; r < runs; r++) {
            int at = r * ResidentUpload.RUN_INTS;
            int[] values = ints(upload, records[at + 3], records[at + 2]);
            put(tables.get(records[at]).buffer(), records[at + 1], values);
        }
    }

    @Override
    public void add(DeviceBuffer upload, ResidentTable table, int column, int delta) {
        for (int slot : slots(upload)) {
            int at = table.offset(slot, column);
            put(table.buffer(), at, new int[] {ints(table.buffer(), at, 1)[0] + delta});
        }
    }

    @Override
    public void fill(DeviceBuffer upload, ResidentTable table, int column, int pageSize) {
        for (int slot : slots(upload)) {
            int at = table.offset(slot, column);
            put(table.buffer(), at, new int[] {ints(table.buffer(), at, 1)[0] % pageSize + 1});
        }
    }

    @Override
    public void store(DeviceBuffer upload, ResidentTable table, int column, DeviceBuffer values) {
        int[] slots = slots(upload);
        int[] v = ints(values, 0, slots.length);
        for (int j = 0; j < slots.length; j++) {
            put(table.buffer(), table.offset(slots[j], column), new int[] {v[j]});
        }
    }

    /** The slots of the step's real rows, in batch order. */
    static int[] slots(DeviceInts ints, DeviceBuffer upload) {
        int count = ints.read(upload, ResidentUpload.COUNT, 1)[0];
        return ints.read(upload, ResidentUpload.SLOTS, count);
    }

    private int[] slots(DeviceBuffer upload) {
        return slots(ints, upload);
    }

    private int[] ints(DeviceBuffer buffer, int at, int count) {
        return ints.read(buffer, at, count);
    }

    private void put(DeviceBuffer buffer, int at, int[] values) {
        ints.write(buffer, at, values);
    }

    @Override
    public void close() {
    }
}
