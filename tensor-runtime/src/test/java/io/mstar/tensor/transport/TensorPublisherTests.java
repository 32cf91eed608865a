package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.TestPattern;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import io.mstar.tensor.bookkeeping.FastTensorBookkeeping;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceKind;
import io.mstar.tensor.device.DeviceMemoryStats;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The publisher's bookkeeping and frees, in one process, on both bookkeeper backends. */
class TensorPublisherTests {

    private static final int SEGMENT = 64 << 10;

    @TempDir
    Path dir;

    final HostDevice device = new HostDevice("host", 16 << 20);
    TensorBookkeeping books;
    ShmArena arena;
    TensorPublisher publisher;
    TensorStore store;
    long nextUuid = 100;

    static Stream<Supplier<TensorBookkeeping>> bookkeepers() {
        return Stream.of(PlainTensorBookkeeping::new, FastTensorBookkeeping::new);
    }

    private void producer(Supplier<TensorBookkeeping> backend) {
        books = backend.get();
        arena = new ShmArena(new ArenaSettings(dir, "worker-4", SEGMENT, 1, 256), ShmPlacementListener.of(books));
        publisher = new TensorPublisher(arena);
        store = new TensorStore(books, publisher);
    }

    @AfterEach
    void close() {
        if (arena != null) {
            arena.close();
        }
        device.close();
    }

    private long put(Device on, int nbytes) {
        long uuid = nextUuid++;
        DeviceBuffer buffer = on.allocate(nbytes);
        ByteBuffer pattern = ByteBuffer.allocateDirect(nbytes);
        TestPattern.fill(pattern, uuid);
        on.copyFromHost(pattern, buffer, 0);
        store.putTensor("r", uuid, buffer, new TensorPointerInfo(uuid, List.of((long) nbytes), List.of(1L), "uint8",
                nbytes, buffer.address(), "127.0.0.1:7000", "worker-4"), null);
        return uuid;
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void publishStampsThePlacementAndSetsMemRegisteredAndTheArenaHoldsTheBytes(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        long uuid = put(device, 5000);
        assertThat(store.isRegistered(uuid)).isFalse();
        assertThat(store.getInfo(uuid).shmSegment()).isNull();

        TensorPointerInfo info = publisher.publish(store, uuid);

        assertThat(info).isEqualTo(store.getInfo(uuid));
        assertThat(info.shmSegment()).isEqualTo(arena.segmentName(0));
        assertThat(store.isRegistered(uuid)).isTrue();
        assertThat(publisher.isPublished(uuid)).isTrue();
        ByteBuffer copy = ByteBuffer.allocate(5000);
        try (ArenaReader reader = new ArenaReader(dir)) {
            reader.read(info.shmSegment(), info.shmOffset(), 5000, copy);
        }
        assertThat(TestPattern.firstMismatch(copy.flip(), uuid, 0)).isEqualTo(-1);
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void spilledTensorHasNoSegmentButIsRegisteredAndServed(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        long uuid = put(device, SEGMENT + 1);

        TensorPointerInfo info = publisher.publish(store, uuid);

        assertThat(info.shmSegment()).isNull();
        assertThat(info.shmOffset()).isZero();
        assertThat(store.isRegistered(uuid)).isTrue();
        assertThat(arena.occupancy().spilledFiles()).isEqualTo(1);
        TensorSource.Pin.Pinned pin = (TensorSource.Pin.Pinned) publisher.source().pin(uuid);
        assertThat(pin.bytes().remaining()).isEqualTo(SEGMENT + 1);
        assertThat(TestPattern.firstMismatch(pin.bytes(), uuid, 0)).isEqualTo(-1);
        pin.unpin().run();
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void removalFreesTheDeviceBufferAtOnceAndTheSlotAtTheLastUnpin(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        long uuid = put(device, 3000);
        publisher.publish(store, uuid);
        TensorSource.Pin.Pinned pin = (TensorSource.Pin.Pinned) publisher.source().pin(uuid);

        store.removeTensor(uuid);

        assertThat(device.stats().bytesInUse()).isZero();
        assertThat(publisher.isPublished(uuid)).isFalse();
        assertThat(arena.occupancy().liveSlots()).isEqualTo(1);
        assertThat(publisher.source().pin(uuid)).isEqualTo(TensorSource.Pin.FREED);
        assertThat(TestPattern.firstMismatch(pin.bytes(), uuid, 0)).isEqualTo(-1);
        pin.unpin().run();
        assertThat(arena.occupancy().liveSlots()).isZero();
        assertThat(arena.occupancy().usedBytes()).isZero();
        assertThat(publisher.source().live()).isZero();
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void removalOfAnUnpublishedTensorFreesOnlyItsBuffer(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        long uuid = put(device, 100);
        store.removeTensor(uuid);
        assertThat(device.stats().bytesInUse()).isZero();
        assertThat(publisher.source().pin(uuid)).isEqualTo(TensorSource.Pin.UNKNOWN);
        assertThat(books.liveCount()).isZero();
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void refusedPublishTakesNoSlotAndPublishesNothing(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        long ok = put(device, 100);
        assertThatThrownBy(() -> publisher.publish(store, new long[] {ok, 999}))
                .isInstanceOf(TensorStoreException.class);
        assertThatThrownBy(() -> publisher.publish(store, new long[] {ok, ok}))
                .isInstanceOf(IllegalStateException.class);
        long forgotten = put(device, 100);
        store.dereferenceBatch(new long[] {forgotten}, new int[] {0}, true); // record gone, tensor still here
        assertThatThrownBy(() -> publisher.publish(store, new long[] {ok, forgotten}))
                .as("the bookkeeper refuses the placement").isInstanceOf(TensorStoreException.class);

        assertThat(arena.occupancy().liveSlots()).as("slots taken before the refusal were given back").isZero();
        assertThat(publisher.publishedCount()).isZero();
        assertThat(publisher.source().pin(ok)).isEqualTo(TensorSource.Pin.UNKNOWN);
        publisher.publish(store, ok);
        assertThatThrownBy(() -> publisher.publish(store, ok)).isInstanceOf(IllegalStateException.class);
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void deviceIsSynchronizedBeforeItsTensorsAreCopiedOut(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        RecordingDevice recording = new RecordingDevice(device);
        long a = put(recording, 100);
        long b = put(recording, 200);
        recording.calls.clear();

        publisher.publish(store, new long[] {a, b});

        assertThat(recording.calls).containsExactly("synchronize", "copyToHost", "copyToHost");
        store.removeAll();
        assertThat(device.stats().bytesInUse()).isZero();
    }

    @ParameterizedTest
    @MethodSource("bookkeepers")
    void aTensorWithAHostCopyIsPublishedFromItWithoutWaitingForTheDevice(Supplier<TensorBookkeeping> backend) {
        producer(backend);
        RecordingDevice recording = new RecordingDevice(device);
        long plain = put(recording, 100);
        long uuid = nextUuid++;
        DeviceBuffer buffer = recording.allocate(64);
        ByteBuffer values = ByteBuffer.allocate(64);
        TestPattern.fill(values, uuid);
        recording.copyFromHost(values.duplicate(), buffer, 0);
        store.putTensor("r", uuid, buffer, new TensorPointerInfo(uuid, List.of(64L), List.of(1L), "uint8", 64,
                buffer.address(), "127.0.0.1:7000", "worker-4"), values);
        recording.calls.clear();

        TensorPointerInfo info = publisher.publish(store, uuid);
        assertThat(recording.calls).as("the host copy's bytes are final: nothing waits for the device").isEmpty();
        ByteBuffer copy = ByteBuffer.allocate(64);
        try (ArenaReader reader = new ArenaReader(dir)) {
            reader.read(info.shmSegment(), info.shmOffset(), 64, copy);
        }
        assertThat(TestPattern.firstMismatch(copy.flip(), uuid, 0)).isEqualTo(-1);

        publisher.publish(store, plain);
        assertThat(recording.calls).containsExactly("synchronize", "copyToHost");
        store.removeAll();
        assertThat(device.stats().bytesInUse()).isZero();
    }

    /** A device recording the calls the publisher makes, over a host device. */
    private static final class RecordingDevice implements Device {
        final HostDevice host;
        final List<String> calls = new ArrayList<>();

        RecordingDevice(HostDevice host) {
            this.host = host;
        }

        private record Buffer(RecordingDevice device, HostBuffer inner) implements DeviceBuffer {
            @Override
            public long address() {
                return inner.address();
            }

            @Override
            public long nbytes() {
                return inner.nbytes();
            }
        }

        @Override
        public String name() {
            return "recording";
        }

        @Override
        public DeviceKind kind() {
            return host.kind();
        }

        @Override
        public DeviceBuffer allocate(long nbytes) {
            return new Buffer(this, host.allocate(nbytes));
        }

        @Override
        public void free(DeviceBuffer buffer) {
            calls.add("free");
            host.free(((Buffer) buffer).inner());
        }

        @Override
        public void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst) {
            calls.add("copyToHost");
            host.copyToHost(((Buffer) src).inner(), srcOffset, dst);
        }

        @Override
        public void copyFromHost(ByteBuffer src, DeviceBuffer dst, long dstOffset) {
            calls.add("copyFromHost");
            host.copyFromHost(src, ((Buffer) dst).inner(), dstOffset);
        }

        @Override
        public void synchronize() {
            calls.add("synchronize");
        }

        @Override
        public DeviceMemoryStats stats() {
            return host.stats();
        }

        @Override
        public void close() {
            // deliberately nothing: the host device belongs to the test
        }
    }
}
