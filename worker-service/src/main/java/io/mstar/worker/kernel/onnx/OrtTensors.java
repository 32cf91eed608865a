package io.mstar.worker.kernel.onnx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;

/**
 * Tensors between the worker and ONNX Runtime, for {@link OnnxNodeKernel} and the minilm-embed encoder alike: the
 * element types both name, direct buffers that ONNX Runtime reads in place (an input is copied once, into the buffer
 * the run reads), and an output's bytes. Every buffer is little-endian, as the worker's tensors are; ONNX Runtime
 * reads the platform's order, which {@link #requireLittleEndian} checks once per kernel.
 */
public final class OrtTensors {

    /** The element types a kernel passes, by their wire names. */
    private static final Map<OnnxJavaType, String> WIRE_DTYPES = Map.of(
            OnnxJavaType.FLOAT, "float32",
            OnnxJavaType.DOUBLE, "float64",
            OnnxJavaType.INT8, "int8",
            OnnxJavaType.UINT8, "uint8",
            OnnxJavaType.INT16, "int16",
            OnnxJavaType.INT32, "int32",
            OnnxJavaType.INT64, "int64",
            OnnxJavaType.BOOL, "bool");

    private OrtTensors() {
    }

    public static boolean supported(OnnxJavaType type) {
        return WIRE_DTYPES.containsKey(type);
    }

    /** The wire name of {@code type} ({@code FLOAT} is {@code float32}); an unsupported type is an argument error. */
    public static String wireDtype(OnnxJavaType type) {
        String dtype = WIRE_DTYPES.get(type);
        if (dtype == null) {
            throw new IllegalArgumentException("element type " + type + " is not passed to or from ONNX Runtime here; "
                    + "supported: " + WIRE_DTYPES.keySet());
        }
        return dtype;
    }

    public static void requireLittleEndian() {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("ONNX Runtime reads tensors in the platform's byte order, and "
                    + "the worker's tensors are little-endian; this platform is " + ByteOrder.nativeOrder());
        }
    }

    /** A zero-filled direct buffer of {@code elements} values of {@code type}, which ONNX Runtime can read in place. */
    public static ByteBuffer direct(OnnxJavaType type, long elements) {
        return ByteBuffer.allocateDirect(Math.toIntExact(elements * type.size)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * A tensor over {@code direct} (no copy): the buffer must stay untouched until the tensor is closed, which the
     * caller does, after the run.
     */
    public static OnnxTensor wrap(ByteBuffer direct, OnnxJavaType type, long[] shape) throws OrtException {
        return OnnxTensor.createTensor(OrtEnvironment.getEnvironment(), direct, shape, type);
    }

    /** Writes {@code value} as element {@code index} of an integer, float or bool buffer. */
    public static void put(ByteBuffer buffer, OnnxJavaType type, int index, long value) {
        switch (type) {
            case INT64 -> buffer.putLong(index * Long.BYTES, value);
            case INT32 -> buffer.putInt(index * Integer.BYTES, Math.toIntExact(value));
            case FLOAT -> buffer.putFloat(index * Float.BYTES, value);
            case DOUBLE -> buffer.putDouble(index * Double.BYTES, value);
            case INT16 -> buffer.putShort(index * Short.BYTES, (short) value);
            case INT8, UINT8, BOOL -> buffer.put(index, (byte) value);
            default -> throw new IllegalArgumentException("cannot write element type " + type);
        }
    }

    /** A tensor of {@code values} as {@code type} (INT64 or INT32 ids, say), shaped {@code shape}. */
    public static OnnxTensor integers(int[] values, OnnxJavaType type, long[] shape) throws OrtException {
        ByteBuffer buffer = direct(type, values.length);
        for (int i = 0; i < values.length; i++) {
            put(buffer, type, i, values[i]);
        }
        return wrap(buffer, type, shape);
    }

    /**
     * The output {@code name} as a tensor of a supported type; anything else (a sequence, a map, strings) is a
     * {@link OnnxModelException}.
     */
    public static OnnxTensor tensor(OnnxValue value, String name) {
        if (!(value instanceof OnnxTensor t) || !supported(t.getInfo().type)) {
            throw new OnnxModelException("output '" + name + "' is " + (value == null ? "missing" : value.getInfo())
                    + ", not a tensor of " + WIRE_DTYPES.keySet());
        }
        return t;
    }

    /** A copy of the tensor's bytes (ONNX Runtime offers no view of an output's memory), position 0. */
    public static ByteBuffer bytes(OnnxTensor tensor) {
        return tensor.getByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A copy of a float32 tensor's values. */
    public static float[] floats(OnnxTensor tensor) {
        if (tensor.getInfo().type != OnnxJavaType.FLOAT) {
            throw new OnnxModelException("expected a float32 output, got " + tensor.getInfo());
        }
        return tensor.getFloatBuffer().array();
    }
}
