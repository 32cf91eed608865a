package io.mstar.tensor;

import java.util.List;
import java.util.Random;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.bookkeeping.TensorBookkeeping;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Baseline;

import static org.assertj.core.api.Assertions.assertThat;

/** A store over the plain bookkeeper and a small host device, with the leak check every test ends with. */
final class StoreFixture {

    final HostDevice device = new HostDevice("host", 1 << 20);
    final TensorBookkeeping bookkeeping;
    final TensorStore store;
    final TensorUuids uuids = new TensorUuids(3, new Random(11));

    StoreFixture(TensorBookkeeping bookkeeping) {
        this.bookkeeping = bookkeeping;
        this.store = new TensorStore(bookkeeping);
    }

    /** Another bookkeeper of the same backend, for a second store. */
    TensorBookkeeping newBookkeeping() {
        try {
            return bookkeeping.getClass().getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    HostBuffer buffer(int nbytes) {
        return device.allocate(nbytes);
    }

    TensorPointerInfo info(long uuid, HostBuffer buffer) {
        return new TensorPointerInfo(uuid, List.of(buffer.nbytes()), List.of(1L), "uint8", buffer.nbytes(),
                buffer.address(), "localhost:7000", "worker-3");
    }

    /** Allocates, mints and stores one tensor of {@code nbytes} for {@code requestId}; its uuid. */
    long put(String requestId, int nbytes) {
        long uuid = uuids.next();
        HostBuffer buffer = buffer(nbytes);
        store.putTensor(requestId, uuid, buffer, info(uuid, buffer), null);
        return uuid;
    }

    /** Nothing held anywhere: no tensor in the store, no record in the bookkeeper, no buffer on the device. */
    void assertBaseline() {
        Baseline.of("store fixture")
                .zero("tensors held", store.liveTensorCount())
                .zero("requests with tensors", store.requestCount())
                .zero("devices with bytes", store.bytesByDevice().size())
                .zero("bookkeeping records", bookkeeping.liveCount())
                .zero("device bytes in use", device.stats().bytesInUse())
                .zero("device buffers live", device.stats().liveBuffers())
                .check();
    }
}
