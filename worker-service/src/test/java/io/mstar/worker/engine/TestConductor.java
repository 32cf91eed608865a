package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.TensorPublisher;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.testing.Baseline;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.wire.ResultTensors;

/**
 * The conductor's data plane in a test: it stores the client's inputs (persisted, served by its own tensor server)
 * and reads emitted outputs from the workers. Used from the test thread only.
 */
final class TestConductor implements AutoCloseable {

    final HostDevice device = new HostDevice("host", 16 << 20);
    final TensorStore store;
    private final ShmArena arena;
    private final TensorPublisher publisher;
    private final TensorServer server;
    private final ArenaReader arenaReader;
    private final TensorReader reader;
    private final TensorUuids uuids = TensorUuids.forEntity("conductor");

    TestConductor(Path arenaDirectory) {
        PlainTensorBookkeeping books = new PlainTensorBookkeeping();
        arena = new ShmArena(new ArenaSettings(arenaDirectory, "conductor", 64 << 10, 1, 256), ShmPlacementListener.of(books));
        publisher = new TensorPublisher(arena);
        store = new TensorStore(books, publisher);
        server = TensorServer.start(publisher.source(), "127.0.0.1", 0, "127.0.0.1", 1);
        arenaReader = new ArenaReader(arenaDirectory);
        reader = new TensorReader(ReaderSettings.defaults("conductor", new HashSet<>(Set.of("127.0.0.1")))
                .withArenaDirectory(arenaDirectory), arenaReader, new SimpleMeterRegistry());
    }

    /** Stores a persisted int32 input for {@code requestId} and answers its published descriptor. */
    TensorPointerInfo input(String requestId, int[] values) {
        long uuid = uuids.next();
        ByteBuffer bytes = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asIntBuffer().put(values);
        DeviceBuffer buffer = device.allocate(values.length * 4L);
        device.copyFromHost(bytes, buffer, 0);
        store.putTensor(requestId, uuid, buffer, new TensorPointerInfo(uuid, List.of((long) values.length), List.of(1L),
                Int32Tensors.DTYPE, values.length * 4L, buffer.address(), server.sessionId(), "conductor"), null);
        store.setMetadata(uuid, true, null);
        return publisher.publish(store, uuid);
    }

    /** Stores a persisted one-dimensional input of raw little-endian {@code bytes} of {@code dtype}. */
    TensorPointerInfo input(String requestId, byte[] bytes, String dtype, int elementSize) {
        long uuid = uuids.next();
        ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length);
        direct.put(bytes).flip();
        DeviceBuffer buffer = device.allocate(bytes.length);
        if (bytes.length > 0) {
            device.copyFromHost(direct, buffer, 0);
        }
        store.putTensor(requestId, uuid, buffer, new TensorPointerInfo(uuid, List.of((long) bytes.length / elementSize),
                List.of(1L), dtype, bytes.length, buffer.address(), server.sessionId(), "conductor"), null);
        store.setMetadata(uuid, true, null);
        return publisher.publish(store, uuid);
    }

    /** Stores a persisted uint8 input (UTF-8 text, say) for {@code requestId} and answers its published descriptor. */
    TensorPointerInfo input(String requestId, byte[] values) {
        return input(requestId, values, "uint8", 1);
    }

    /** Reads any tensor's raw bytes from its producer. */
    byte[] readBytes(String requestId, TensorPointerInfo info) throws Exception {
        ByteBuffer bytes = ByteBuffer.allocateDirect((int) info.nbytes());
        if (info.nbytes() > 0) {
            reader.read(requestId, info, bytes).get(10, TimeUnit.SECONDS);
        }
        byte[] out = new byte[(int) info.nbytes()];
        bytes.get(0, out);
        return out;
    }

    /** An emitted output's raw bytes: from its message when they came inline, else read from its producer. */
    byte[] outputBytes(ResultTensors result) throws Exception {
        TensorPointerInfo info = result.graphEdge().tensorInfo().get(0);
        return result.inline() ? Base64.getDecoder().decode(result.inlineData().get(0)) : readBytes(result.requestId(), info);
    }

    /** An emitted int32 output, as {@link #outputBytes}. */
    int[] outputInts(ResultTensors result) throws Exception {
        byte[] bytes = outputBytes(result);
        int[] values = new int[bytes.length / 4];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(values);
        return values;
    }

    /** The conductor's side of the leak check: no tensor and no device byte left. */
    void assertAtBaseline() {
        Baseline.of("test conductor")
                .zero("tensors", store.liveTensorCount())
                .zero("device bytes", device.stats().bytesInUse())
                .check();
    }

    void removeRequest(String requestId) {
        store.removeRequest(requestId);
        reader.forget(requestId);
    }

    @Override
    public void close() {
        store.removeAll();
        server.close();
        arena.close();
        reader.close();
        arenaReader.close();
        device.close();
    }
}
