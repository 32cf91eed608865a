package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.google.protobuf.CodedInputStream;

/**
 * The float32 initializers of an ONNX model, read straight off the protobuf wire (ModelProto.graph →
 * GraphProto.initializer / node → TensorProto), without generated classes: only the handful of fields below are
 * needed. A MatMul whose right operand is an initializer also names that weight after the MatMul's output, which is
 * how exporters that give such weights anonymous names ({@code onnx::MatMul_787}) still say which layer they
 * belong to ({@code /encoder/layer.0/attention/self/query/MatMul_output_0}).
 *
 * <p>Field numbers are those of onnx.proto3: ModelProto.graph = 7; GraphProto.node = 1, initializer = 5;
 * NodeProto.input = 1, output = 2, op_type = 4; TensorProto.dims = 1, data_type = 2, float_data = 4, name = 8,
 * raw_data = 9 (little-endian).
 */
public final class OnnxInitializers {

    private static final int FLOAT = 1;

    /** One float32 tensor, row-major. */
    public record FloatTensor(long[] dims, float[] values) {
    }

    /** One MatMul node whose right operand is an initializer. */
    public record MatMul(String weight, String output) {
    }

    private final Map<String, FloatTensor> tensors;
    private final List<MatMul> matMuls;

    private OnnxInitializers(Map<String, FloatTensor> tensors, List<MatMul> matMuls) {
        this.tensors = tensors;
        this.matMuls = matMuls;
    }

    /** Parses a whole model file's bytes. */
    public static OnnxInitializers parse(byte[] model) {
        try {
            CodedInputStream in = CodedInputStream.newInstance(model);
            in.setSizeLimit(Integer.MAX_VALUE);
            // raw_data then aliases the model's bytes instead of copying them (the embeddings alone are 47 MB)
            in.enableAliasing(true);
            Map<String, FloatTensor> tensors = new HashMap<>();
            List<String[]> nodes = new ArrayList<>();
            boolean graphSeen = false;
            while (!in.isAtEnd()) {
                int tag = in.readTag();
                if (tag >>> 3 == 7) {
                    graphSeen = true;
                    int limit = in.pushLimit(in.readRawVarint32());
                    graph(in, tensors, nodes);
                    in.popLimit(limit);
                } else {
                    in.skipField(tag);
                }
            }
            if (!graphSeen) {
                throw new MiniLmException("the ONNX model has no graph");
            }
            List<MatMul> matMuls = new ArrayList<>();
            for (String[] node : nodes) {
                // node = {op_type, input0, input1, output0}
                if ("MatMul".equals(node[0]) && node[2] != null && tensors.containsKey(node[2]) && node[3] != null) {
                    matMuls.add(new MatMul(node[2], node[3]));
                }
            }
            return new OnnxInitializers(Map.copyOf(tensors), List.copyOf(matMuls));
        } catch (IOException e) {
            throw new MiniLmException("the ONNX model is not a valid protobuf: " + e.getMessage(), e);
        }
    }

    /** The float32 initializer {@code name}; a missing one is a {@link MiniLmException}. */
    public FloatTensor tensor(String name) {
        FloatTensor t = tensors.get(name);
        if (t == null) {
            throw new MiniLmException("the ONNX model has no float32 initializer '" + name + "'");
        }
        return t;
    }

    /** The initializer that is the right operand of the MatMul producing {@code output}. */
    public FloatTensor matMulWeight(String output) {
        for (MatMul m : matMuls) {
            if (m.output().equals(output)) {
                return tensors.get(m.weight());
            }
        }
        throw new MiniLmException("the ONNX model has no MatMul with an initializer producing '" + output + "'");
    }

    public Map<String, FloatTensor> tensors() {
        return tensors;
    }

    public List<MatMul> matMuls() {
        return matMuls;
    }

    private static void graph(CodedInputStream in, Map<String, FloatTensor> tensors, List<String[]> nodes)
            throws IOException {
        while (!in.isAtEnd()) {
            int tag = in.readTag();
            int field = tag >>> 3;
            if (field == 1) {
                int limit = in.pushLimit(in.readRawVarint32());
                nodes.add(node(in));
                in.popLimit(limit);
            } else if (field == 5) {
                int limit = in.pushLimit(in.readRawVarint32());
                tensor(in, tensors);
                in.popLimit(limit);
            } else {
                in.skipField(tag);
            }
        }
    }

    private static String[] node(CodedInputStream in) throws IOException {
        String[] node = new String[4];
        int inputs = 0;
        while (!in.isAtEnd()) {
            int tag = in.readTag();
            switch (tag >>> 3) {
                case 1 -> {
                    String input = in.readString();
                    if (inputs < 2) {
                        node[1 + inputs] = input;
                    }
                    inputs++;
                }
                case 2 -> {
                    String output = in.readString();
                    if (node[3] == null) {
                        node[3] = output;
                    }
                }
                case 4 -> node[0] = in.readString();
                default -> in.skipField(tag);
            }
        }
        return node;
    }

    private static void tensor(CodedInputStream in, Map<String, FloatTensor> tensors) throws IOException {
        List<Long> dims = new ArrayList<>();
        int dataType = 0;
        String name = null;
        ByteBuffer raw = null;
        List<Float> floats = new ArrayList<>();
        while (!in.isAtEnd()) {
            int tag = in.readTag();
            int field = tag >>> 3;
            boolean packed = (tag & 7) == 2;
            switch (field) {
                case 1 -> {
                    if (packed) {
                        int limit = in.pushLimit(in.readRawVarint32());
                        while (in.getBytesUntilLimit() > 0) {
                            dims.add(in.readInt64());
                        }
                        in.popLimit(limit);
                    } else {
                        dims.add(in.readInt64());
                    }
                }
                case 2 -> dataType = in.readInt32();
                case 4 -> {
                    if (packed) {
                        int limit = in.pushLimit(in.readRawVarint32());
                        while (in.getBytesUntilLimit() > 0) {
                            floats.add(in.readFloat());
                        }
                        in.popLimit(limit);
                    } else {
                        floats.add(in.readFloat());
                    }
                }
                case 8 -> name = in.readString();
                case 9 -> raw = in.readBytes().asReadOnlyByteBuffer();
                default -> in.skipField(tag);
            }
        }
        if (dataType != FLOAT || name == null) {
            return;
        }
        long[] shape = dims.stream().mapToLong(Long::longValue).toArray();
        long count = 1;
        for (long d : shape) {
            count *= d;
        }
        float[] values = new float[Math.toIntExact(count)];
        if (raw != null) {
            if (raw.remaining() != values.length * 4L) {
                throw new MiniLmException("initializer '" + name + "' has " + raw.remaining() + " raw bytes for "
                        + values.length + " floats");
            }
            raw.order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
        } else {
            if (floats.size() != values.length) {
                throw new MiniLmException("initializer '" + name + "' has " + floats.size() + " floats for shape "
                        + dims);
            }
            for (int i = 0; i < values.length; i++) {
                values[i] = floats.get(i);
            }
        }
        tensors.put(name, new FloatTensor(shape, values));
    }
}
