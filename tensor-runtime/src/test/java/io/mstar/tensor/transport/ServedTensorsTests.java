package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ServedTensorsTests {

    private final ServedTensors tensors = new ServedTensors();
    private final AtomicInteger frees = new AtomicInteger();

    @Test
    void releaseWithoutPinsFreesAtOnceAndLaterPinsSeeFreed() {
        tensors.publish(1, ByteBuffer.allocate(8), frees::incrementAndGet);
        assertThat(tensors.release(1)).isTrue();
        assertThat(frees).hasValue(1);
        assertThat(tensors.pin(1)).isEqualTo(TensorSource.Pin.FREED);
        assertThat(tensors.pin(2)).isEqualTo(TensorSource.Pin.UNKNOWN);
    }

    @Test
    void freeIsDeferredToTheLastOfSeveralUnpinsAndRunsExactlyOnce() {
        tensors.publish(1, ByteBuffer.allocate(8), frees::incrementAndGet);
        TensorSource.Pin.Pinned a = (TensorSource.Pin.Pinned) tensors.pin(1);
        TensorSource.Pin.Pinned b = (TensorSource.Pin.Pinned) tensors.pin(1);
        assertThat(tensors.release(1)).isFalse();
        a.unpin().run();
        assertThat(frees).hasValue(0);
        b.unpin().run();
        assertThat(frees).hasValue(1);
        assertThat(tensors.live()).isZero();
        assertThatThrownBy(() -> b.unpin().run()).isInstanceOf(IllegalStateException.class);
        assertThat(frees).hasValue(1);
    }

    @Test
    void releasingAnUnknownOrAlreadyReleasedTensorIsAnError() {
        assertThatThrownBy(() -> tensors.release(9)).isInstanceOf(IllegalStateException.class);
        tensors.publish(1, ByteBuffer.allocate(8), frees::incrementAndGet);
        tensors.pin(1);
        tensors.release(1);
        assertThatThrownBy(() -> tensors.release(1)).isInstanceOf(IllegalStateException.class);
        assertThat(frees).hasValue(0);
    }

    @Test
    void pinnedBytesAreAReadOnlyViewOfWhatWasPublished() {
        ByteBuffer bytes = ByteBuffer.allocateDirect(16);
        bytes.put(0, (byte) 42);
        bytes.position(0).limit(4);
        tensors.publish(1, bytes, frees::incrementAndGet);
        TensorSource.Pin.Pinned p = (TensorSource.Pin.Pinned) tensors.pin(1);
        assertThat(p.bytes().remaining()).isEqualTo(4);
        assertThat(p.bytes().get(0)).isEqualTo((byte) 42);
        assertThat(p.bytes().isReadOnly()).isTrue();
        p.unpin().run();
    }
}
