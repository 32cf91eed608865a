package io.mstar.conductor.openai;

import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;

/**
 * Reads the data of an output {@link Chunk} as the lifecycle renders it (a JSON number list for
 * int32/int64/float32/float64, base64 text otherwise; a list of those when a signal carries several tensors).
 * Data of an unexpected form is a {@code model_error}: the model broke the routes' contract.
 */
final class ChunkData {

    private ChunkData() {
    }

    /** The byte values of a text chunk: int32 values 0..255 (or raw bytes for a uint8/int8 tensor). */
    static byte[] textBytes(Chunk chunk) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        appendBytes(chunk, chunk.data(), out);
        return out.toByteArray();
    }

    private static void appendBytes(Chunk chunk, Object data, ByteArrayOutputStream out) {
        if (data instanceof String base64) {
            out.writeBytes(base64(chunk, base64));
        } else if (data instanceof List<?> list) {
            for (Object v : list) {
                if (v instanceof Number n) {
                    long b = n.longValue();
                    if (b < 0 || b > 255) {
                        throw broken(chunk, "text value " + b + " is not a byte (0..255)");
                    }
                    out.write((int) b);
                } else {
                    appendBytes(chunk, v, out);
                }
            }
        } else {
            throw broken(chunk, "text data is neither numbers nor base64");
        }
    }

    /** The numbers of a float32/float64 chunk, flattened. */
    static float[] floats(Chunk chunk) {
        if (!(chunk.data() instanceof List<?> list)) {
            throw broken(chunk, "expected a list of numbers");
        }
        float[] out = new float[list.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(list.get(i) instanceof Number n)) {
                throw broken(chunk, "expected a flat list of numbers");
            }
            out[i] = n.floatValue();
        }
        return out;
    }

    /** The first integer of an int32/int64 chunk. */
    static long firstLong(Chunk chunk) {
        if (chunk.data() instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof Number n) {
            return n.longValue();
        }
        throw broken(chunk, "expected a non-empty list of integers");
    }

    /** The raw little-endian bytes of a base64-rendered chunk (int16 audio). */
    static byte[] rawBytes(Chunk chunk) {
        if (chunk.data() instanceof String base64) {
            return base64(chunk, base64);
        }
        if (chunk.data() instanceof List<?> list && list.stream().allMatch(String.class::isInstance)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            list.forEach(s -> out.writeBytes(base64(chunk, (String) s)));
            return out.toByteArray();
        }
        throw broken(chunk, "expected base64 data");
    }

    /** An integer metadata value; workers' metadata are strings, so both forms are read. */
    static int metadataInt(Chunk chunk, String key, int absent) {
        Map<String, Object> metadata = chunk.metadata();
        Object v = metadata == null ? null : metadata.get(key);
        if (v == null) {
            return absent;
        }
        try {
            return v instanceof Number n ? Math.toIntExact(n.longValue()) : Integer.parseInt(v.toString().trim());
        } catch (ArithmeticException | NumberFormatException e) {
            throw broken(chunk, "metadata '" + key + "' is not an integer: " + v);
        }
    }

    static String dtype(Chunk chunk) {
        Object v = chunk.metadata() == null ? null : chunk.metadata().get("dtype");
        return v == null ? "" : v.toString();
    }

    private static byte[] base64(Chunk chunk, String text) {
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw broken(chunk, "data is not valid base64");
        }
    }

    static OpenAiException broken(Chunk chunk, String why) {
        return new OpenAiException(ErrorType.MODEL_ERROR, null, "output '" + chunk.name() + "' (" + chunk.modality()
                + "): " + why);
    }

    /** The error a terminal error/aborted chunk stands for. */
    static OpenAiException terminalError(Chunk terminal, String prefix, String param) {
        Chunk.ChunkError e = terminal.error();
        ErrorType type = ErrorType.INTERNAL;
        String detail = "the request ended with '" + terminal.type() + "'";
        if (e != null) {
            for (ErrorType t : ErrorType.values()) {
                if (t.value().equals(e.errorType())) {
                    type = t;
                }
            }
            detail = e.detail() == null ? e.errorType() : e.detail();
        }
        return new OpenAiException(type, param, prefix + detail);
    }
}
