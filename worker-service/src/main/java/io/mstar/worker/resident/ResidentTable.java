package io.mstar.worker.resident;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * One table of a node's resident state: {@code rows} rows (one per slot, slot 0 the zeroed scratch row that padded
 * batch rows point at) of {@code width} int32 cells, row-major, on the device; and its host mirror, which the planner
 * keeps equal to what the device holds after each step without reading the device. Table 0 of a planner is its
 * narrow table (the planner-packed columns every resource shares); the others are wide tables, each declared by the
 * resource that writes it.
 */
public final class ResidentTable {

    private final int index;
    private final String key;
    private final String name;
    private final int rows;
    private final int width;
    private final int[] mirror;
    private DeviceBuffer buffer;

    ResidentTable(int index, String key, String name, int rows, int width) {
        if (rows < 2 || width < 1) {
            throw new IllegalArgumentException("table " + key + "/" + name + " needs 2+ rows and 1+ columns, got "
                    + rows + "x" + width);
        }
        this.index = index;
        this.key = key;
        this.name = name;
        this.rows = rows;
        this.width = width;
        this.mirror = new int[Math.multiplyExact(rows, width)];
    }

    /** Allocates the device table, zeroed. */
    void open(Device device) {
        buffer = device.allocate((long) mirror.length * Integer.BYTES);
        device.copyFromHost(ByteBuffer.allocateDirect(mirror.length * Integer.BYTES), buffer, 0);
    }

    void close(Device device) {
        if (buffer != null) {
            DeviceBuffer b = buffer;
            buffer = null;
            device.free(b);
        }
    }

    /** Its index in the planner's table list: what a write names. */
    public int index() {
        return index;
    }

    /** The resource key that declared it ({@link ResidentPlanner#NARROW} for the narrow table). */
    public String key() {
        return key;
    }

    public String name() {
        return name;
    }

    public int rows() {
        return rows;
    }

    public int width() {
        return width;
    }

    /** The device table; valid between the planner's open and close. */
    public DeviceBuffer buffer() {
        if (buffer == null) {
            throw new IllegalStateException("table " + key + "/" + name + " is not open");
        }
        return buffer;
    }

    /** The host mirror's cell. */
    public int get(int slot, int cell) {
        return mirror[offset(slot, cell)];
    }

    /** Sets the host mirror's cell (a resource's advance; the planner's writes). */
    public void set(int slot, int cell, int value) {
        mirror[offset(slot, cell)] = value;
    }

    /** The host mirror's cells {@code [first, first + count)} of {@code slot}'s row. */
    public int[] mirrorRow(int slot, int first, int count) {
        int at = offset(slot, first);
        return Arrays.copyOfRange(mirror, at, at + count);
    }

    void apply(int offset, int[] values) {
        System.arraycopy(values, 0, mirror, offset, values.length);
    }

    /** Cell {@code cell} of {@code slot}'s row as a flat index. */
    public int offset(int slot, int cell) {
        if (slot < 0 || slot >= rows || cell < 0 || cell >= width) {
            throw new IndexOutOfBoundsException("cell (" + slot + ", " + cell + ") of " + key + "/" + name + ", "
                    + rows + "x" + width);
        }
        return slot * width + cell;
    }

    /** The whole device table, read back (tests, the mirror check); the host never needs it to plan. */
    public int[] readDevice(Device device) {
        ByteBuffer bytes = ByteBuffer.allocateDirect(mirror.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(buffer(), 0, bytes);
        int[] out = new int[mirror.length];
        bytes.asIntBuffer().get(out);
        return out;
    }

    /** A copy of the whole host mirror. */
    public int[] mirror() {
        return mirror.clone();
    }
}
