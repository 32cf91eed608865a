package io.mstar.worker.kernel.cuda;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;

/**
 * Checks a kernel's operands on the host before a launch: a kernel reading past a buffer does not fail, it
 * corrupts a neighbour or poisons the context for every request on the device, so a bad argument must be
 * refused here as a per-request {@link Reason#INVALID_ARGUMENT}.
 */
final class Int32Operands {

    static final int INT32_BYTES = 4;

    private Int32Operands() {
    }

    /** {@code buffer} is a live-looking buffer of {@code device} holding at least {@code count} int32s. */
    static void requireInt32s(Device device, DeviceBuffer buffer, long count, String role) {
        if (count < 0) {
            throw invalid(device, role + ": negative element count " + count);
        }
        requireOwned(device, buffer, role);
        if (count > buffer.nbytes() / INT32_BYTES) {
            throw invalid(device, role + ": " + count + " int32 elements do not fit in " + buffer.nbytes() + " bytes");
        }
    }

    /** The buffer belongs to {@code device}: an address of another device means nothing to this one. */
    static void requireOwned(Device device, DeviceBuffer buffer, String role) {
        if (buffer == null) {
            throw invalid(device, role + ": no buffer");
        }
        if (buffer.device() != device) {
            throw invalid(device, role + ": buffer belongs to " + buffer.device().name());
        }
    }

    /**
     * {@code target} is not {@code source}: a reduction first initialises its target, which would overwrite an
     * input element it has not read yet. Live buffers of a device never overlap, so the same address is the
     * only way to alias.
     */
    static void requireDistinct(Device device, DeviceBuffer target, DeviceBuffer source, long count, String role) {
        if (count > 0 && target.address() == source.address()) {
            throw invalid(device, role + ": the output is the input buffer itself");
        }
    }

    private static DeviceException invalid(Device device, String message) {
        return new DeviceException(Reason.INVALID_ARGUMENT, device.name(), message);
    }
}
