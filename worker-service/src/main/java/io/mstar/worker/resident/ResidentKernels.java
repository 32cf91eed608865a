package io.mstar.worker.resident;

import io.mstar.tensor.device.DeviceBuffer;

/**
 * The table operations a captured step is made of, for its real rows (the upload's count and slots): the upload's
 * runs applied, and the narrow commits every resource shares. {@link ResidentCudaKernels} launches them on a GPU
 * (inside the capture); {@link ResidentHostKernels} does the same on a host device's tables (at each replay).
 */
public interface ResidentKernels extends AutoCloseable {

    /** The upload's runs into their tables. */
    void apply(DeviceBuffer upload);

    /** {@code table[slot][column] += delta}. */
    void add(DeviceBuffer upload, ResidentTable table, int column, int delta);

    /** A last-page fill after one more position: {@code fill % pageSize + 1}. */
    void fill(DeviceBuffer upload, ResidentTable table, int column, int pageSize);

    /** {@code table[slot][column] = values[row]}. */
    void store(DeviceBuffer upload, ResidentTable table, int column, DeviceBuffer values);

    @Override
    void close();
}
