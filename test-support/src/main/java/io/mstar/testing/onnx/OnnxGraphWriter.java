package io.mstar.testing.onnx;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.google.protobuf.CodedOutputStream;

/**
 * ONNX models built in a test, written straight onto the protobuf wire as {@code OnnxInitializers} reads them: the
 * project has no generated ONNX classes, and a handful of fields make a graph. Field numbers are those of
 * onnx.proto3: ModelProto ir_version = 1, graph = 7, opset_import = 8 (OperatorSetIdProto domain = 1, version = 2);
 * GraphProto node = 1, name = 2, initializer = 5, input = 11, output = 12; NodeProto input = 1, output = 2, name = 3,
 * op_type = 4, attribute = 5; AttributeProto name = 1, f = 2, i = 3, type = 20; ValueInfoProto name = 1, type = 2;
 * TypeProto tensor_type = 1 (elem_type = 1, shape = 2); TensorShapeProto dim = 1 (dim_value = 1, dim_param = 2);
 * TensorProto dims = 1, data_type = 2, name = 8, raw_data = 9.
 */
public final class OnnxGraphWriter {

    public static final int FLOAT = 1;
    public static final int INT32 = 6;
    public static final int INT64 = 7;

    private static final int IR_VERSION = 8;
    private static final int OPSET = 17;
    private static final int ATTRIBUTE_FLOAT = 1;
    private static final int ATTRIBUTE_INT = 2;

    private final List<byte[]> nodes = new ArrayList<>();
    private final List<byte[]> initializers = new ArrayList<>();
    private final List<byte[]> inputs = new ArrayList<>();
    private final List<byte[]> outputs = new ArrayList<>();

    /** A graph input; each dim is a Long (fixed) or a String (a named free axis). */
    public OnnxGraphWriter input(String name, int elemType, Object... dims) {
        inputs.add(valueInfo(name, elemType, dims));
        return this;
    }

    public OnnxGraphWriter output(String name, int elemType, Object... dims) {
        outputs.add(valueInfo(name, elemType, dims));
        return this;
    }

    /** A float32 constant of shape {@code dims}. */
    public OnnxGraphWriter initializer(String name, float[] values, long... dims) {
        Message t = new Message();
        for (long d : dims) {
            t.int64(1, d);
        }
        t.int64(2, FLOAT);
        t.string(8, name);
        byte[] raw = new byte[values.length * 4];
        java.nio.ByteBuffer.wrap(raw).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer().put(values);
        t.bytes(9, raw);
        initializers.add(t.toBytes());
        return this;
    }

    /** A node; {@code attributes} alternate name and value (an Integer/Long is an INT, a Float a FLOAT). */
    public OnnxGraphWriter node(String opType, List<String> in, List<String> out, Object... attributes) {
        Message n = new Message();
        in.forEach(i -> n.string(1, i));
        out.forEach(o -> n.string(2, o));
        n.string(3, opType + "_" + nodes.size());
        n.string(4, opType);
        for (int a = 0; a < attributes.length; a += 2) {
            Message attribute = new Message();
            attribute.string(1, (String) attributes[a]);
            if (attributes[a + 1] instanceof Float f) {
                attribute.float32(2, f);
                attribute.int64(20, ATTRIBUTE_FLOAT);
            } else {
                attribute.int64(3, ((Number) attributes[a + 1]).longValue());
                attribute.int64(20, ATTRIBUTE_INT);
            }
            n.message(5, attribute.toBytes());
        }
        nodes.add(n.toBytes());
        return this;
    }

    public byte[] toBytes() {
        Message graph = new Message();
        nodes.forEach(n -> graph.message(1, n));
        graph.string(2, "test");
        initializers.forEach(i -> graph.message(5, i));
        inputs.forEach(i -> graph.message(11, i));
        outputs.forEach(o -> graph.message(12, o));
        Message opset = new Message();
        opset.string(1, "");
        opset.int64(2, OPSET);
        Message model = new Message();
        model.int64(1, IR_VERSION);
        model.message(7, graph.toBytes());
        model.message(8, opset.toBytes());
        return model.toBytes();
    }

    public Path writeTo(Path file) {
        try {
            return Files.write(file, toBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] valueInfo(String name, int elemType, Object... dims) {
        Message shape = new Message();
        for (Object d : dims) {
            Message dim = new Message();
            if (d instanceof String param) {
                dim.string(2, param);
            } else {
                dim.int64(1, ((Number) d).longValue());
            }
            shape.message(1, dim.toBytes());
        }
        Message tensor = new Message();
        tensor.int64(1, elemType);
        tensor.message(2, shape.toBytes());
        Message type = new Message();
        type.message(1, tensor.toBytes());
        Message info = new Message();
        info.string(1, name);
        info.message(2, type.toBytes());
        return info.toBytes();
    }

    /** One protobuf message's fields, in the order written. */
    private static final class Message {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final CodedOutputStream out = CodedOutputStream.newInstance(bytes);

        void int64(int field, long value) {
            write(() -> out.writeInt64(field, value));
        }

        void float32(int field, float value) {
            write(() -> out.writeFloat(field, value));
        }

        void string(int field, String value) {
            write(() -> out.writeString(field, value));
        }

        void bytes(int field, byte[] value) {
            write(() -> out.writeByteArray(field, value));
        }

        void message(int field, byte[] value) {
            bytes(field, value);
        }

        byte[] toBytes() {
            write(out::flush);
            return bytes.toByteArray();
        }

        private interface Write {
            void run() throws IOException;
        }

        private void write(Write write) {
            try {
                write.run();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
