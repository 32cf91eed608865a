package io.mstar.worker.kernel.minilm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.model.MiniLmModel;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code encode} node kernel as the worker builds it ({@link MiniLmKernels#load}: weights and tokenizer read on
 * a loader thread, the encoder built at the first batch) on a real {@link HostDevice}: one batch of sentences of
 * different lengths, outputs of the contract's dtypes and shapes, every buffer freed; a failed load fails batches
 * with a typed error and still closes cleanly.
 */
class MiniLmNodeKernelTests {

    private HostDevice device;
    private final List<DeviceBuffer> inputs = new ArrayList<>();

    @BeforeEach
    void open() {
        device = new HostDevice("host", 64 << 20);
    }

    @AfterEach
    void closeAndCheck() {
        inputs.forEach(device::free);
        assertThat(device.stats().bytesInUse()).isZero();
        assertThat(device.stats().liveBuffers()).isZero();
        device.close();
    }

    private NodeCall call(String id, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        DeviceBuffer buffer = device.allocate(bytes.length);
        inputs.add(buffer);
        device.copyFromHost(ByteBuffer.wrap(bytes), buffer, 0);
        return new NodeCall(id, Map.of(MiniLmModel.TEXT, new Tensor(buffer, "uint8", List.of((long) bytes.length))),
                info(id), new NestedLoopIndices(List.of(), Map.of(), 0));
    }

    private static CurrentForwardPassInfo info(String id) {
        return new CurrentForwardPassInfo(id, MiniLmModel.EMBED, false, 0, 0L, 1);
    }

    private float[] floats(Tensor t) {
        ByteBuffer b = ByteBuffer.allocateDirect((int) t.elementCount() * 4).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(t.buffer(), 0, b);
        float[] out = new float[(int) t.elementCount()];
        b.asFloatBuffer().get(out);
        return out;
    }

    @Test
    void theLoadedKernelEmbedsABatchOfDifferentLengthsAndHandsOverOnlyItsOutputs() {
        MiniLmNodeKernel kernel = MiniLmKernels.load(device, MiniLmCudaSettings.defaults());
        try {
            List<NodeResult> results = kernel.forward(device, List.of(call("a", "a cat sits on the mat"),
                    call("b", "a kitten is on a rug"), call("c", "stock markets fell")));
            assertThat(results).hasSize(3).allSatisfy(r -> assertThat(r.failed()).isFalse());
            float[][] e = new float[3][];
            int[] counts = new int[3];
            for (int i = 0; i < 3; i++) {
                Tensor embedding = results.get(i).outputs().get(MiniLmModel.EMBEDDING);
                Tensor count = results.get(i).outputs().get(MiniLmModel.NUM_TOKENS);
                assertThat(embedding.dtype()).isEqualTo("float32");
                assertThat(embedding.dims()).containsExactly((long) MiniLmModel.EMBEDDING_DIM);
                assertThat(count.dtype()).isEqualTo("int32");
                assertThat(count.dims()).containsExactly(1L);
                e[i] = floats(embedding);
                counts[i] = Int32Tensors.read(device, count)[0];
                device.free(embedding.buffer());
                device.free(count.buffer());
            }
            assertThat(counts).containsExactly(8, 8, 5);
            assertThat(MiniLmGolden.cosine(e[0], e[0])).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-6));
            assertThat(MiniLmGolden.cosine(e[0], e[1])).isGreaterThan(MiniLmGolden.cosine(e[0], e[2]));
        } finally {
            kernel.close();
            kernel.close();
        }
        assertThatThrownBy(() -> kernel.forward(device, List.of(call("d", "x")))).isInstanceOf(MiniLmException.class);
    }

    @Test
    void aLoadThatFailedFailsEachBatchWithATypedErrorAndClosesCleanly() {
        MiniLmNodeKernel kernel = new MiniLmNodeKernel(CompletableFuture.failedFuture(new IllegalStateException("no weights")),
                weights -> {
                    throw new AssertionError("no encoder without weights");
                });
        assertThatThrownBy(() -> kernel.forward(device, List.of(call("a", "hello")))).isInstanceOf(MiniLmException.class)
                .hasMessageContaining("no weights");
        kernel.close();
    }
}
