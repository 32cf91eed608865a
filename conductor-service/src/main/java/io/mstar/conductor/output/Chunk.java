package io.mstar.conductor.output;

import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One element of a request's output stream, as the client sees it (NDJSON line or SSE event). Output chunks
 * carry {@code modality}, {@code name}, {@code data} and {@code metadata}; the stream always ends with exactly one
 * terminal chunk: {@code done}, {@code error} (with {@code error}) or {@code aborted} (with {@code reason} and
 * {@code error}).
 *
 * @param type     {@code output}, {@code done}, {@code error} or {@code aborted}
 * @param modality the output modality (output chunks)
 * @param name     the signal name (output chunks)
 * @param data     the tensor: a JSON number array for int32/int64/float32/float64, else base64 text
 * @param metadata dtype, shape, encoding, loop position and the worker's string metadata
 * @param error    the problem of an error or aborted chunk
 * @param reason   why an aborted request was aborted
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Chunk(@JsonProperty("type") String type, @JsonProperty("modality") String modality,
        @JsonProperty("name") String name, @JsonProperty("data") Object data,
        @JsonProperty("metadata") Map<String, Object> metadata, @JsonProperty("error") ChunkError error,
        @JsonProperty("reason") String reason) {

    public static final String OUTPUT = "output";
    public static final String DONE = "done";
    public static final String ERROR = "error";
    public static final String ABORTED = "aborted";

    public Chunk {
        Objects.requireNonNull(type, "type");
    }

    public static Chunk output(String modality, String name, Object data, Map<String, Object> metadata) {
        return new Chunk(OUTPUT, modality, name, data, metadata, null, null);
    }

    public static Chunk done() {
        return new Chunk(DONE, null, null, null, null, null, null);
    }

    public static Chunk error(ChunkError error) {
        return new Chunk(ERROR, null, null, null, null, error, null);
    }

    public static Chunk aborted(String reason, ChunkError error) {
        return new Chunk(ABORTED, null, null, null, null, error, reason);
    }

    public boolean terminal() {
        return !OUTPUT.equals(type);
    }

    /**
     * The error of a terminal chunk: its stable type (named {@code error_type} as in problem+json, so a client
     * reads streamed and plain errors alike), the status a plain answer would carry, and a detail.
     */
    public record ChunkError(@JsonProperty("error_type") String errorType, @JsonProperty("status") int status,
            @JsonProperty("detail") String detail) {
    }
}
