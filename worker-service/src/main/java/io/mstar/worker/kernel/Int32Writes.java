package io.mstar.worker.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.Transfer;

/**
 * The small {@code int32} output tensors of one kernel step, made as the step goes and filled together by
 * {@link #flush()}: a step of B requests writes a few tensors each, and on a GPU one copy batch waits once where a
 * copy per tensor would wait each time. A tensor's bytes are in place only after {@code flush()}, which the step
 * calls before it returns its results. Whoever owns the tensors frees them; {@link #freeAll} is for a step that
 * fails before handing them over. Each tensor carries its values as its host copy.
 */
public final class Int32Writes {

    private final Device device;
    private final List<Tensor> made = new ArrayList<>();
    private final List<Transfer> pending = new ArrayList<>();

    public Int32Writes(Device device) {
        this.device = device;
    }

    /** A fresh one-dimensional tensor that will hold {@code values} once flushed. */
    public Tensor add(int[] values) {
        ByteBuffer bytes = ByteBuffer.allocate(values.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asIntBuffer().put(values);
        Tensor t = new Tensor(device.allocate(bytes.capacity()), Int32Tensors.DTYPE,
                List.of((long) values.length), bytes);
        made.add(t);
        pending.add(Transfer.of(t.buffer(), bytes));
        return t;
    }

    /** Copies every pending tensor's values in, in one batch. */
    public void flush() {
        if (!pending.isEmpty()) {
            device.copyFromHost(pending);
            pending.clear();
        }
    }

    /** Frees every tensor made so far, adding failures of the frees to {@code cause}. */
    public void freeAll(Throwable cause) {
        for (Tensor t : made) {
            try {
                device.free(t.buffer());
            } catch (DeviceException e) {
                cause.addSuppressed(e);
            }
        }
        made.clear();
        pending.clear();
    }
}
