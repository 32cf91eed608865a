package io.mstar.worker.kernel.onnx;

import io.mstar.testing.onnx.OnnxGraphWriter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import ai.onnxruntime.OnnxJavaType;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * {@link OnnxNodeKernel} on graphs built here ({@link OnnxTestModels}) against the same computation in Java, within
 * 1e-5, on a real {@link HostDevice}: both batching rules on seeded random inputs, a bad model failing at load with
 * a message naming what is wrong, and a bad call failing alone with a message naming its signal while its batch
 * and the next batch go on. Every test ends with no device byte in use (inputs and outputs freed, nothing the
 * kernel allocated left behind).
 */
class OnnxNodeKernelTests {

    @TempDir
    Path dir;

    private HostDevice device;
    private final List<DeviceBuffer> owned = new ArrayList<>();

    @BeforeEach
    void open() {
        device = new HostDevice("host", 64 << 20);
    }

    @AfterEach
    void nothingLeftBehind() {
        owned.forEach(device::free);
        assertThat(device.stats().bytesInUse()).isZero();
        assertThat(device.stats().liveBuffers()).isZero();
        device.close();
    }

    // --- numerics -----------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(OnnxNodeSpec.Batching.class)
    void denseMatchesJavaOnRequestsOfDifferentRowCounts(OnnxNodeSpec.Batching batching) {
        long seed = Seeds.of("OnnxNodeKernelTests.dense." + batching);
        Random random = new Random(seed);
        OnnxTestModels.Dense dense = OnnxTestModels.Dense.write(dir, random, 5, 3);
        OnnxNodeSpec spec = new OnnxNodeSpec(dense.file().toString(), Map.of("features", "x"),
                Map.of("y", "scores"), Map.of("features", OnnxJavaType.FLOAT), batching, Set.of(), null, 1);
        try (OnnxNodeKernel kernel = new OnnxNodeKernel(spec)) {
            for (int round = 0; round < 3; round++) {
                List<float[]> xs = new ArrayList<>();
                List<NodeCall> calls = new ArrayList<>();
                for (int i = 0; i < 1 + random.nextInt(6); i++) {
                    int rows = 1 + random.nextInt(4);
                    float[] x = OnnxTestModels.uniform(random, rows * dense.in());
                    xs.add(x);
                    calls.add(call("r" + i, Map.of("features", floats(x, rows, dense.in()))));
                }
                List<NodeResult> results = forward(kernel, calls);
                for (int i = 0; i < xs.size(); i++) {
                    Tensor y = output(results.get(i), "scores");
                    int rows = xs.get(i).length / dense.in();
                    assertThat(y.dtype()).isEqualTo("float32");
                    assertThat(y.dims()).containsExactly((long) rows, (long) dense.out());
                    assertClose(readFloats(y), dense.reference(xs.get(i)), "seed " + seed + ", request " + i);
                }
            }
        }
    }

    @Test
    void paddedSoftmaxMasksPaddingAndCutsEachRequestBackToItsLength() {
        long seed = Seeds.of("OnnxNodeKernelTests.paddedSoftmax");
        Random random = new Random(seed);
        OnnxNodeSpec spec = OnnxNodeSpec.padded(OnnxTestModels.maskedSoftmax(dir).toString(), Map.of("scores", "x"),
                Map.of("y", "weights"), Map.of("scores", OnnxJavaType.FLOAT), Set.of(OnnxTestModels.SEQ), "mask");
        try (OnnxNodeKernel kernel = new OnnxNodeKernel(spec)) {
            for (int round = 0; round < 3; round++) {
                List<float[]> xs = new ArrayList<>();
                List<int[]> shapes = new ArrayList<>();
                List<NodeCall> calls = new ArrayList<>();
                for (int i = 0; i < 2 + random.nextInt(6); i++) {
                    int rows = 1 + random.nextInt(2);
                    int length = 1 + random.nextInt(12);
                    float[] x = OnnxTestModels.uniform(random, rows * length);
                    for (int j = 0; j < x.length; j++) {
                        x[j] *= 4;
                    }
                    xs.add(x);
                    shapes.add(new int[] {rows, length});
                    calls.add(call("r" + i, Map.of("scores", floats(x, rows, length))));
                }
                List<NodeResult> results = forward(kernel, calls);
                for (int i = 0; i < xs.size(); i++) {
                    Tensor y = output(results.get(i), "weights");
                    assertThat(y.dims()).containsExactly((long) shapes.get(i)[0], (long) shapes.get(i)[1]);
                    assertClose(readFloats(y), OnnxTestModels.softmax(xs.get(i), shapes.get(i)[1]),
                            "seed " + seed + ", request " + i + " of shape " + List.of(shapes.get(i)[0], shapes.get(i)[1]));
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = OnnxJavaType.class, names = {"INT64", "INT32"})
    void paddedLookupCutsARankThreeOutputAlongItsNamedAxis(OnnxJavaType idType) {
        long seed = Seeds.of("OnnxNodeKernelTests.paddedLookup." + idType);
        Random random = new Random(seed);
        int rows = 11;
        OnnxTestModels.Lookup lookup = OnnxTestModels.Lookup.write(dir, random,
                idType == OnnxJavaType.INT64 ? OnnxGraphWriter.INT64 : OnnxGraphWriter.INT32, rows, 3);
        OnnxNodeSpec spec = OnnxNodeSpec.padded(lookup.file().toString(), Map.of("tokens", "ids"),
                Map.of("z", "vectors"), Map.of("tokens", idType), Set.of(OnnxTestModels.SEQ), null);
        try (OnnxNodeKernel kernel = new OnnxNodeKernel(spec)) {
            List<long[]> ids = new ArrayList<>();
            List<NodeCall> calls = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                long[] tokens = random.longs(1 + random.nextInt(9), 0, rows).toArray();
                ids.add(tokens);
                calls.add(call("r" + i, Map.of("tokens", integers(idType, tokens, 1, tokens.length))));
            }
            List<NodeResult> results = forward(kernel, calls);
            for (int i = 0; i < ids.size(); i++) {
                Tensor z = output(results.get(i), "vectors");
                assertThat(z.dims()).containsExactly(1L, (long) ids.get(i).length, 3L);
                assertClose(readFloats(z), lookup.reference(ids.get(i)), "seed " + seed + ", request " + i);
            }
        }
    }

    // --- a bad model fails at load -------------------------------------------------------------------------------

    @Test
    void aFileThatIsNotAModelFailsAtLoadNamingIt() throws Exception {
        Path garbage = Files.write(dir.resolve("garbage.onnx"), new byte[] {0x13, 0x37, 0x00, 0x7f, 0x42, 0x42});
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest(garbage.toString(), Map.of("a", "x"),
                Map.of("y", "b"), Map.of("a", OnnxJavaType.FLOAT))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining(garbage.toString())
                .hasMessageContaining("ORT_INVALID_PROTOBUF");
        Path missing = dir.resolve("missing.onnx");
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest(missing.toString(), Map.of("a", "x"),
                Map.of("y", "b"), Map.of("a", OnnxJavaType.FLOAT))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining(missing.toString());
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest("classpath:no/such.onnx", Map.of("a", "x"),
                Map.of("y", "b"), Map.of("a", OnnxJavaType.FLOAT))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining("classpath:no/such.onnx");
    }

    @Test
    void aModelThatDoesNotFitTheSpecFailsAtLoadNamingWhatIsMissing() {
        String dense = OnnxTestModels.Dense.write(dir, new Random(1), 4, 2).file().toString();
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest(dense, Map.of("features", "nope"),
                Map.of("y", "scores"), Map.of("features", OnnxJavaType.FLOAT))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining(dense).hasMessageContaining("no input 'nope'").hasMessageContaining("[x]");
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest(dense, Map.of("features", "x"),
                Map.of("logits", "scores"), Map.of("features", OnnxJavaType.FLOAT))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining("no output 'logits'").hasMessageContaining("[y]");
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest(dense, Map.of("features", "x"),
                Map.of("y", "scores"), Map.of("features", OnnxJavaType.INT64))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining("signal 'features' is declared INT64").hasMessageContaining("takes FLOAT");
        String softmax = OnnxTestModels.maskedSoftmax(dir).toString();
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.perRequest(softmax, Map.of("scores", "x"),
                Map.of("y", "weights"), Map.of("scores", OnnxJavaType.FLOAT))))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining("input 'mask'").hasMessageContaining("fed by no signal");
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.padded(softmax, Map.of("scores", "x"),
                Map.of("y", "weights"), Map.of("scores", OnnxJavaType.FLOAT), Set.of("sequence_length"), "mask")))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining("padAxes names 'sequence_length'").hasMessageContaining("x[batch, seq]");
        assertThatThrownBy(() -> new OnnxNodeKernel(OnnxNodeSpec.padded(softmax, Map.of("scores", "x"),
                Map.of("y", "weights"), Map.of("scores", OnnxJavaType.FLOAT), Set.of(OnnxTestModels.SEQ), "maks")))
                .isInstanceOf(OnnxModelException.class)
                .hasMessageContaining("no input 'maks'");
    }

    // --- a bad call fails alone ----------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(OnnxNodeSpec.Batching.class)
    void aBadCallFailsAloneNamingItsSignalAndTheKernelGoesOn(OnnxNodeSpec.Batching batching) {
        long seed = Seeds.of("OnnxNodeKernelTests.badCall." + batching);
        Random random = new Random(seed);
        OnnxTestModels.Dense dense = OnnxTestModels.Dense.write(dir, random, 4, 2);
        OnnxNodeSpec spec = new OnnxNodeSpec(dense.file().toString(), Map.of("features", "x"),
                Map.of("y", "scores"), Map.of("features", OnnxJavaType.FLOAT), batching, Set.of(), null, 1);
        float[] good = OnnxTestModels.uniform(random, 4);
        Map<String, Tensor> missing = Map.of("other", floats(good, 1, 4));
        Map<String, Tensor> wrongDtype = Map.of("features", integers(OnnxJavaType.INT32, new long[] {1, 2, 3, 4}, 1, 4));
        Map<String, Tensor> wrongShape = Map.of("features", floats(OnnxTestModels.uniform(random, 5), 1, 5));
        Map<String, Tensor> wrongRank = Map.of("features", floats(good, 4));
        Map<String, Tensor> tooFewBytes = Map.of("features", new Tensor(allocate(8), "float32", List.of(1L, 4L)));
        try (OnnxNodeKernel kernel = new OnnxNodeKernel(spec)) {
            List<NodeResult> results = forward(kernel, List.of(call("good-0", Map.of("features", floats(good, 1, 4))),
                    call("missing", missing), call("wrong-dtype", wrongDtype), call("wrong-shape", wrongShape),
                    call("wrong-rank", wrongRank), call("too-few-bytes", tooFewBytes),
                    call("good-1", Map.of("features", floats(good, 1, 4)))));
            assertFailed(results.get(1), "request missing has no input 'features'");
            assertFailed(results.get(2), "input 'features' is int32", "takes float32");
            assertFailed(results.get(3), "input 'features' has shape [1, 5]", "takes [batch, 4]");
            assertFailed(results.get(4), "input 'features' has shape [4]", "takes [batch, 4]");
            assertFailed(results.get(5), "input 'features' holds 8 bytes", "needs 16");
            for (int i : new int[] {0, 6}) {
                assertClose(readFloats(output(results.get(i), "scores")), dense.reference(good), "good call " + i);
            }
            List<NodeResult> next = forward(kernel, List.of(call("next", Map.of("features", floats(good, 1, 4)))));
            assertClose(readFloats(output(next.get(0), "scores")), dense.reference(good), "the next batch");
        }
    }

    @ParameterizedTest
    @EnumSource(OnnxNodeSpec.Batching.class)
    void aRunThatOnnxRuntimeRefusesFailsOnlyTheCallAtFaultWithItsMessage(OnnxNodeSpec.Batching batching) {
        long seed = Seeds.of("OnnxNodeKernelTests.runFailure." + batching);
        Random random = new Random(seed);
        OnnxTestModels.Lookup lookup = OnnxTestModels.Lookup.write(dir, random, OnnxGraphWriter.INT64, 4, 2);
        Set<String> padAxes = batching == OnnxNodeSpec.Batching.PAD ? Set.of(OnnxTestModels.SEQ) : Set.of();
        OnnxNodeSpec spec = new OnnxNodeSpec(lookup.file().toString(), Map.of("tokens", "ids"), Map.of("z", "vectors"),
                Map.of("tokens", OnnxJavaType.INT64), batching, padAxes, null, 1);
        long[] good = {0, 3, 1};
        try (OnnxNodeKernel kernel = new OnnxNodeKernel(spec)) {
            List<NodeResult> results = forward(kernel, List.of(
                    call("good-0", Map.of("tokens", integers(OnnxJavaType.INT64, good, 1, 3))),
                    call("out-of-range", Map.of("tokens", integers(OnnxJavaType.INT64, new long[] {2, 9}, 1, 2))),
                    call("good-1", Map.of("tokens", integers(OnnxJavaType.INT64, new long[] {1}, 1, 1)))));
            assertThat(results.get(1).failed()).isTrue();
            assertThat(results.get(1).error()).contains("ONNX Runtime failed on " + lookup.file());
            assertThat(results.get(1).errorType()).isIn(WorkerErrorType.INVALID_INPUT, WorkerErrorType.KERNEL_FAILED);
            System.out.println("ONNX Runtime's refusal: " + results.get(1).error());
            assertClose(readFloats(output(results.get(0), "vectors")), lookup.reference(good), "good-0");
            assertClose(readFloats(output(results.get(2), "vectors")), lookup.reference(new long[] {1}), "good-1");
        }
    }

    @Test
    void closeIsIdempotentAndAClosedKernelRunsNothing() {
        OnnxTestModels.Dense dense = OnnxTestModels.Dense.write(dir, new Random(2), 4, 2);
        OnnxNodeKernel kernel = new OnnxNodeKernel(OnnxNodeSpec.perRequest(dense.file().toString(),
                Map.of("features", "x"), Map.of("y", "scores"), Map.of("features", OnnxJavaType.FLOAT)));
        kernel.close();
        kernel.close();
        NodeCall call = call("late", Map.of("features", floats(new float[4], 1, 4)));
        assertThatThrownBy(() -> kernel.forward(device, List.of(call))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    // --- helpers -------------------------------------------------------------------------------------------------

    /** Runs the batch; every output handed over is freed after the test, like the engine would. */
    private List<NodeResult> forward(OnnxNodeKernel kernel, List<NodeCall> calls) {
        List<NodeResult> results = kernel.forward(device, calls);
        assertThat(results).hasSameSizeAs(calls);
        results.forEach(r -> r.outputs().values().forEach(t -> owned.add(t.buffer())));
        return results;
    }

    private static Tensor output(NodeResult result, String signal) {
        assertThat(result.error()).isNull();
        assertThat(result.outputs()).containsOnlyKeys(signal);
        return result.outputs().get(signal);
    }

    private static void assertFailed(NodeResult result, String... parts) {
        assertThat(result.failed()).isTrue();
        assertThat(result.errorType()).isEqualTo(WorkerErrorType.INVALID_INPUT);
        for (String part : parts) {
            assertThat(result.error()).contains(part);
        }
    }

    private static void assertClose(float[] actual, float[] expected, String what) {
        assertThat(actual).as(what).hasSameSizeAs(expected);
        for (int i = 0; i < expected.length; i++) {
            assertThat(actual[i]).as("%s, element %d", what, i).isCloseTo(expected[i], within(1e-5f));
        }
    }

    private static NodeCall call(String id, Map<String, Tensor> inputs) {
        return new NodeCall(id, inputs, new CurrentForwardPassInfo(id, "run", false, 0, 0L, 1),
                new NestedLoopIndices(List.of(), Map.of(), 0));
    }

    private DeviceBuffer allocate(long bytes) {
        DeviceBuffer buffer = device.allocate(bytes);
        owned.add(buffer);
        return buffer;
    }

    private Tensor floats(float[] values, long... dims) {
        ByteBuffer bytes = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(values);
        return upload(bytes, "float32", dims);
    }

    private Tensor integers(OnnxJavaType type, long[] values, long... dims) {
        ByteBuffer bytes = ByteBuffer.allocateDirect(values.length * type.size).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            OrtTensors.put(bytes, type, i, values[i]);
        }
        return upload(bytes, OrtTensors.wireDtype(type), dims);
    }

    private Tensor upload(ByteBuffer bytes, String dtype, long... dims) {
        DeviceBuffer buffer = allocate(bytes.capacity());
        device.copyFromHost(bytes, buffer, 0);
        List<Long> shape = new ArrayList<>();
        for (long d : dims) {
            shape.add(d);
        }
        return new Tensor(buffer, dtype, shape);
    }

    private float[] readFloats(Tensor t) {
        ByteBuffer bytes = ByteBuffer.allocateDirect((int) t.elementCount() * 4).order(ByteOrder.LITTLE_ENDIAN);
        device.copyToHost(t.buffer(), 0, bytes);
        float[] values = new float[(int) t.elementCount()];
        bytes.asFloatBuffer().get(values);
        return values;
    }
}
