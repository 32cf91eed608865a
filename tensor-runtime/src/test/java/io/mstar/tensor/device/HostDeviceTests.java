package io.mstar.tensor.device;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HostDeviceTests {

    private final HostDevice device = new HostDevice("host", 1024);
    private final HostDevice other = new HostDevice("host-other", 1024);

    @AfterEach
    void everyBufferIsBackToTheDevice() {
        assertThat(device.stats().bytesInUse()).isZero();
        assertThat(device.stats().liveBuffers()).isZero();
        device.close();
        other.close();
    }

    @Test
    void allocateAndFreeKeepStatsExact() {
        HostBuffer a = device.allocate(100);
        HostBuffer b = device.allocate(28);
        assertThat(device.stats()).isEqualTo(new DeviceMemoryStats(128, 128, 2, 0, 0));
        assertThat(a.nbytes()).isEqualTo(100);
        assertThat(a.device()).isSameAs(device);
        assertThat(device.kind()).isEqualTo(DeviceKind.HOST);
        device.free(a);
        assertThat(device.stats()).isEqualTo(new DeviceMemoryStats(28, 28, 2, 1, 0));
        device.free(b);
        assertThat(device.stats()).isEqualTo(new DeviceMemoryStats(0, 0, 2, 2, 0));
    }

    @Test
    void addressesAreUniqueAndNeverReused() {
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            HostBuffer buffer = device.allocate(8);
            assertThat(seen.add(buffer.address())).as("address %d reused", buffer.address()).isTrue();
            assertThat(buffer.address()).isNotZero();
            device.free(buffer);
        }
    }

    @Test
    void copiesRoundTripBothWaysAtAnOffset() {
        HostBuffer buffer = device.allocate(16);
        ByteBuffer src = ByteBuffer.wrap(new byte[] {7, 1, 2, 3, 4, 5, 7}).position(1).limit(6);
        device.copyFromHost(src, buffer, 10);
        assertThat(src.position()).as("source position untouched").isEqualTo(1);
        assertThat(src.limit()).isEqualTo(6);

        ByteBuffer dst = ByteBuffer.allocate(9).position(1).limit(8);
        device.copyToHost(buffer, 9, dst);
        assertThat(dst.position()).as("destination position untouched").isEqualTo(1);
        assertThat(dst.array()).containsExactly(0, 0, 1, 2, 3, 4, 5, 0, 0);
        assertThatThrownBy(() -> device.copyToHost(buffer, 0, ByteBuffer.allocate(1).asReadOnlyBuffer()))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));

        ByteBuffer view = buffer.bytes();
        assertThat(view.position()).isZero();
        assertThat(view.limit()).isEqualTo(16);
        assertThat(view.isDirect()).isTrue();
        assertThat(view.get(12)).isEqualTo((byte) 3);
        device.free(buffer);
    }

    @Test
    void copiesOutsideTheBufferAreInvalidArguments() {
        HostBuffer buffer = device.allocate(8);
        assertThatThrownBy(() -> device.copyToHost(buffer, 4, ByteBuffer.allocate(5)))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        assertThatThrownBy(() -> device.copyFromHost(ByteBuffer.allocate(1), buffer, -1))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        device.free(buffer);
    }

    @Test
    void allocationPastCapacityIsOutOfMemoryAndLeavesStatsUntouched() {
        HostBuffer big = device.allocate(1000);
        assertThatThrownBy(() -> device.allocate(25))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(DeviceException.Reason.OUT_OF_MEMORY);
                    assertThat(e.isFatal()).isFalse();
                    assertThat(e.device()).isEqualTo("host");
                });
        assertThat(device.stats()).isEqualTo(new DeviceMemoryStats(1000, 1000, 1, 0, 0));
        HostBuffer fits = device.allocate(24);
        device.free(big);
        device.free(fits);
    }

    @Test
    void doubleFreeIsAnInvalidArgument() {
        HostBuffer buffer = device.allocate(8);
        device.free(buffer);
        assertThatThrownBy(() -> device.free(buffer))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        assertThat(device.stats().frees()).isEqualTo(1);
        assertThatThrownBy(buffer::bytes).isInstanceOf(DeviceException.class);
        assertThatThrownBy(() -> device.copyToHost(buffer, 0, ByteBuffer.allocate(1)))
                .isInstanceOf(DeviceException.class);
    }

    @Test
    void aBufferOfAnotherDeviceIsRefused() {
        HostBuffer foreign = other.allocate(8);
        assertThatThrownBy(() -> device.free(foreign))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        assertThat(other.isLive(foreign)).isTrue();
        other.free(foreign);
        assertThat(other.stats().bytesInUse()).isZero();
    }

    @Test
    void negativeOrHugeSizesAreInvalidArguments() {
        assertThatThrownBy(() -> device.allocate(-1))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        assertThatThrownBy(() -> new HostDevice().allocate(1L << 32))
                .isInstanceOfSatisfying(DeviceException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeviceException.Reason.INVALID_ARGUMENT));
        HostBuffer empty = device.allocate(0);
        assertThat(empty.bytes().remaining()).isZero();
        device.free(empty);
    }
}
