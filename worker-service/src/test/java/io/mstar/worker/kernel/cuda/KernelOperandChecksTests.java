package io.mstar.worker.kernel.cuda;

import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import io.mstar.tensor.device.HostDevice;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The host-side operand checks every launch goes through, on real host buffers: a refused operand is a
 * per-request INVALID_ARGUMENT, and exactly the operands a kernel can handle pass.
 */
class KernelOperandChecksTests {

    private final HostDevice device = new HostDevice("host-a", 1 << 20);
    private final HostDevice other = new HostDevice("host-b", 1 << 20);

    @AfterEach
    void nothingLeftAllocated() {
        assertThat(device.stats().bytesInUse()).isZero();
        assertThat(device.stats().liveBuffers()).isZero();
        assertThat(other.stats().liveBuffers()).isZero();
        device.close();
        other.close();
    }

    @Test
    void aBufferHoldingExactlyTheElementsPassesAndOneElementMoreIsRefused() {
        DeviceBuffer buffer = device.allocate(4 * 10 + 3);
        try {
            assertThatCode(() -> Int32Operands.requireInt32s(device, buffer, 10, "input")).doesNotThrowAnyException();
            assertThatCode(() -> Int32Operands.requireInt32s(device, buffer, 0, "input")).doesNotThrowAnyException();

            assertInvalid(() -> Int32Operands.requireInt32s(device, buffer, 11, "input"));
        } finally {
            device.free(buffer);
        }
    }

    @Test
    void anEmptyBufferHoldsZeroElementsOnly() {
        DeviceBuffer empty = device.allocate(0);
        try {
            assertThatCode(() -> Int32Operands.requireInt32s(device, empty, 0, "chunk")).doesNotThrowAnyException();

            assertInvalid(() -> Int32Operands.requireInt32s(device, empty, 1, "chunk"));
        } finally {
            device.free(empty);
        }
    }

    @Test
    void aNegativeCountIsRefused() {
        DeviceBuffer buffer = device.allocate(16);
        try {
            assertInvalid(() -> Int32Operands.requireInt32s(device, buffer, -1, "input"));
        } finally {
            device.free(buffer);
        }
    }

    @Test
    void aBufferOfAnotherDeviceIsRefusedEvenWhenLargeEnough() {
        DeviceBuffer foreign = other.allocate(1024);
        try {
            assertThatThrownBy(() -> Int32Operands.requireInt32s(device, foreign, 1, "input"))
                    .isInstanceOfSatisfying(DeviceException.class, e -> {
                        assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
                        assertThat(e.device()).isEqualTo("host-a");
                    });
        } finally {
            other.free(foreign);
        }
    }

    @Test
    void aMissingBufferIsRefused() {
        assertInvalid(() -> Int32Operands.requireInt32s(device, null, 0, "input"));
    }

    @Test
    void aReductionOutputMayNotBeItsOwnNonEmptyInput() {
        DeviceBuffer a = device.allocate(40);
        DeviceBuffer b = device.allocate(40);
        try {
            assertThatCode(() -> Int32Operands.requireDistinct(device, b, a, 10, "out")).doesNotThrowAnyException();
            // nothing is read from an empty input, so initialising the output first cannot clobber it
            assertThatCode(() -> Int32Operands.requireDistinct(device, a, a, 0, "out")).doesNotThrowAnyException();

            assertInvalid(() -> Int32Operands.requireDistinct(device, a, a, 1, "out"));
        } finally {
            device.free(a);
            device.free(b);
        }
    }

    private static void assertInvalid(Executable check) {
        assertThatThrownBy(check::execute)
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT));
    }
}
