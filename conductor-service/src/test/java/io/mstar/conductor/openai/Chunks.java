package io.mstar.conductor.openai;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.mstar.conductor.output.Chunk;

/** Output chunks as the lifecycle renders them (data by dtype, metadata with dtype/shape/encoding). */
final class Chunks {

    private Chunks() {
    }

    static Chunk text(int... bytes) {
        List<Integer> data = new ArrayList<>();
        for (int b : bytes) {
            data.add(b);
        }
        return Chunk.output("text", "text", data, metadata("int32", bytes.length, "json", Map.of()));
    }

    static Chunk embedding(float... values) {
        List<Float> data = new ArrayList<>();
        for (float v : values) {
            data.add(v);
        }
        return Chunk.output("embedding", "embedding", data, metadata("float32", values.length, "json", Map.of()));
    }

    static Chunk numTokens(int n) {
        return Chunk.output("usage", "num_tokens", List.of(n), metadata("int32", 1, "json", Map.of()));
    }

    /** int16 samples with the worker's string metadata, as the toy-tts codec sends them. */
    static Chunk audio(int sampleRate, int channels, short... samples) {
        ByteBuffer b = ByteBuffer.allocate(2 * samples.length).order(ByteOrder.LITTLE_ENDIAN);
        for (short s : samples) {
            b.putShort(s);
        }
        return Chunk.output("audio", "audio", Base64.getEncoder().encodeToString(b.array()), metadata("int16",
                samples.length, "base64", Map.of("sample_rate", String.valueOf(sampleRate), "channels",
                        String.valueOf(channels))));
    }

    static Chunk failed(String type, int status, String detail) {
        return Chunk.error(new Chunk.ChunkError(type, status, detail));
    }

    static Chunk aborted(String reason) {
        return Chunk.aborted(reason, new Chunk.ChunkError("request_aborted", 409, "aborted: " + reason));
    }

    private static Map<String, Object> metadata(String dtype, long n, String encoding, Map<String, String> worker) {
        Map<String, Object> m = new LinkedHashMap<>(worker);
        m.put("dtype", dtype);
        m.put("shape", List.of(n));
        m.put("encoding", encoding);
        m.put("loop_indices", Map.of());
        m.put("fwd_pass_index", 0);
        return m;
    }
}
