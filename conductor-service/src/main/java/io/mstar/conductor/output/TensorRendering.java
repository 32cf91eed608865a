package io.mstar.conductor.output;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * How tensor bytes (little-endian, contiguous) become JSON chunk data: numbers for the dtypes JSON can carry
 * exactly enough, base64 for anything else. Stateless.
 */
public final class TensorRendering {

    /** {@code metadata.encoding} of data given as a JSON array. */
    public static final String JSON_ARRAY = "json";
    /** {@code metadata.encoding} of data given as base64 text. */
    public static final String BASE64 = "base64";

    private TensorRendering() {
    }

    public static String encoding(String dtype) {
        return switch (dtype) {
            case "int32", "int64", "float32", "float64" -> JSON_ARRAY;
            default -> BASE64;
        };
    }

    /** Renders {@code bytes} (position to limit) of {@code dtype}. */
    public static Object render(String dtype, ByteBuffer bytes) {
        ByteBuffer b = bytes.slice().order(ByteOrder.LITTLE_ENDIAN);
        switch (dtype) {
            case "int32": {
                List<Integer> out = new ArrayList<>(b.remaining() / 4);
                while (b.remaining() >= 4) {
                    out.add(b.getInt());
                }
                return out;
            }
            case "int64": {
                List<Long> out = new ArrayList<>(b.remaining() / 8);
                while (b.remaining() >= 8) {
                    out.add(b.getLong());
                }
                return out;
            }
            case "float32": {
                List<Float> out = new ArrayList<>(b.remaining() / 4);
                while (b.remaining() >= 4) {
                    out.add(b.getFloat());
                }
                return out;
            }
            case "float64": {
                List<Double> out = new ArrayList<>(b.remaining() / 8);
                while (b.remaining() >= 8) {
                    out.add(b.getDouble());
                }
                return out;
            }
            default: {
                byte[] raw = new byte[b.remaining()];
                b.get(raw);
                return Base64.getEncoder().encodeToString(raw);
            }
        }
    }
}
