package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.Int32Writes;
import io.mstar.worker.kernel.Tensor;

/**
 * The host copies the ledger keeps beside small tensors ({@code cpu_tensor}): kernel outputs made from host values,
 * small received tensors and the chunks joined from them. Each must hold exactly the device's bytes, and every
 * tensor and byte must be gone once the request is.
 */
class TensorLedgerHostCopyTests {

    @TempDir
    Path arena;

    private final HostDevice device = new HostDevice(HostDevice.NAME, 8 << 20);
    private WorkerDataPlane data;
    private TensorLedger ledger;

    @BeforeEach
    void start() {
        data = new WorkerDataPlane(EntityId.worker(0), new WorkerDataProperties("127.0.0.1", 0, "127.0.0.1", arena,
                DataSize.ofKilobytes(512), 2, DataSize.ofMegabytes(8)), device, new SimpleMeterRegistry());
        ledger = new TensorLedger(data.parts());
    }

    @AfterEach
    void stop() {
        data.close();
        device.close();
    }

    @Test
    void aKernelOutputMadeFromHostValuesKeepsThemAndTheyAreTheDevicesBytes() {
        Int32Writes writes = new Int32Writes(device);
        Tensor made = writes.add(new int[] {7, -3, 1 << 20});
        writes.flush();

        long uuid = ledger.storeOutput("r", made, "lm", "decode");

        assertThat(ledger.store().getCpuTensor(uuid)).isNotNull();
        assertThat(ledger.hostBytes(uuid)).isEqualTo(deviceBytes(uuid));
        Tensor input = ledger.tensor(uuid);
        assertThat(input.host()).isNotNull();
        assertThat(Int32Tensors.read(device, input)).containsExactly(7, -3, 1 << 20);
        assertEmptyAfterRemoval();
    }

    @Test
    void aSmallReceivedTensorKeepsAHostCopyAndALargeOneDoesNot() {
        int large = TensorLedger.RECEIVED_HOST_COPY_LIMIT + 4;
        long small = ledger.storeReceived("r", source(1, 8), ints(11, 12));
        long big = ledger.storeReceived("r", source(2, large), ByteBuffer.allocate(large).put(0, (byte) 5));

        assertThat(ledger.store().getCpuTensor(small)).isNotNull();
        assertThat(ledger.hostBytes(small)).isEqualTo(deviceBytes(small)).isEqualTo(ints(11, 12).array());
        assertThat(ledger.store().getCpuTensor(big)).isNull();
        assertThat(ledger.hostBytes(big)[0]).isEqualTo((byte) 5);
        assertEmptyAfterRemoval();
    }

    @Test
    void aChunkJoinedFromHostCopiesKeepsTheJoinedBytes() {
        long a = ledger.storeReceived("r", source(1, 8), ints(1, 2));
        long b = ledger.storeReceived("r", source(2, 8), ints(3, 4));
        Int32Writes writes = new Int32Writes(device);
        Tensor noCopy = new Tensor(writes.add(new int[] {5, 6}).buffer(), Int32Tensors.DTYPE, List.of(2L));
        writes.flush();
        long c = ledger.storeOutput("r", noCopy, "lm", "decode");
        assertThat(ledger.store().getCpuTensor(c)).isNull();

        Tensor chunk = ledger.concatenate(List.of(a, b, c), Int32Tensors.DTYPE);
        long joined = ledger.storeMade("r", chunk);

        assertThat(chunk.dims()).containsExactly(6L);
        assertThat(Int32Tensors.read(device, chunk)).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(ledger.hostBytes(joined)).isEqualTo(deviceBytes(joined));
        assertEmptyAfterRemoval();
    }

    @Test
    void aHostCopyOfAnotherSizeThanTheBufferIsRefused() {
        Int32Writes writes = new Int32Writes(device);
        Tensor made = writes.add(new int[] {1, 2});
        writes.flush();
        assertThatThrownBy(() -> new Tensor(made.buffer(), made.dtype(), made.dims(), ByteBuffer.allocate(4)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4 bytes");
        device.free(made.buffer());
    }

    private byte[] deviceBytes(long uuid) {
        int n = Math.toIntExact(ledger.info(uuid).nbytes());
        ByteBuffer read = ByteBuffer.allocate(n);
        device.copyToHost(ledger.store().getTensor(uuid), 0, read);
        return read.array();
    }

    private void assertEmptyAfterRemoval() {
        ledger.store().removeRequest("r");
        assertThat(ledger.store().liveTensorCount()).isZero();
        assertThat(ledger.store().hostCopyBytes()).isZero();
        assertThat(device.stats().bytesInUse()).isZero();
    }

    private static TensorPointerInfo source(long uuid, long nbytes) {
        return new TensorPointerInfo(uuid, List.of(nbytes / 4), List.of(1L), Int32Tensors.DTYPE, nbytes, 0,
                "127.0.0.1:7000", "worker-1");
    }

    private static ByteBuffer ints(int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        return b;
    }
}
