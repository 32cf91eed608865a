package io.mstar.conductor.openai;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonProperty;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

/**
 * Turns the internal chunk streams of an embeddings call (one request per input string) into OpenAI's list. An
 * item's vector is its {@code embedding} output (modality {@code embedding}, float32); its token count is the
 * {@code num_tokens} output (int32 [1]), 0 when the model sends none.
 */
public final class Embeddings {

    static final String EMBEDDING_MODALITY = "embedding";
    static final String NUM_TOKENS = "num_tokens";
    public static final String FLOAT = "float";
    public static final String BASE64 = "base64";

    /** One input's result. */
    public record Item(int index, float[] vector, int tokens) {
    }

    /** @param embedding a float list, or base64 of the little-endian float32 bytes */
    public record Embedding(@JsonProperty("object") String object, @JsonProperty("index") int index,
            @JsonProperty("embedding") Object embedding) {
    }

    public record Usage(@JsonProperty("prompt_tokens") int promptTokens, @JsonProperty("total_tokens") int totalTokens) {
    }

    public record EmbeddingList(@JsonProperty("object") String object, @JsonProperty("data") List<Embedding> data,
            @JsonProperty("model") String model, @JsonProperty("usage") Usage usage) {
    }

    private Embeddings() {
    }

    /** One input's chunks to its item; its failure is an {@link OpenAiException} naming the input. */
    public static Mono<Item> item(int index, Flux<Chunk> chunks) {
        return Mono.defer(() -> {
            float[][] vector = {null};
            int[] tokens = {0};
            return chunks.handle((Chunk c, SynchronousSink<Item> sink) -> {
                if (!c.terminal()) {
                    if (EMBEDDING_MODALITY.equals(c.modality())) {
                        if (vector[0] != null) {
                            sink.error(ChunkData.broken(c, "more than one embedding for one input"));
                            return;
                        }
                        vector[0] = ChunkData.floats(c);
                    } else if (NUM_TOKENS.equals(c.name())) {
                        tokens[0] = Math.toIntExact(ChunkData.firstLong(c));
                    }
                } else if (Chunk.DONE.equals(c.type())) {
                    if (vector[0] == null) {
                        sink.error(new OpenAiException(ErrorType.MODEL_ERROR, "input",
                                "input[" + index + "]: the model sent no embedding"));
                        return;
                    }
                    sink.next(new Item(index, vector[0], tokens[0]));
                } else {
                    sink.error(ChunkData.terminalError(c, "input[" + index + "]: ", "input"));
                }
            }).singleOrEmpty().switchIfEmpty(Mono.error(() -> new OpenAiException(ErrorType.INTERNAL, "input",
                    "input[" + index + "]: output stream ended without a terminal chunk")));
        });
    }

    /** The response of the items, in input order. */
    public static EmbeddingList list(String model, List<Item> items, String encodingFormat) {
        List<Item> ordered = items.stream().sorted(Comparator.comparingInt(Item::index)).toList();
        int tokens = ordered.stream().mapToInt(Item::tokens).sum();
        List<Embedding> data = ordered.stream().map(i -> new Embedding("embedding", i.index(),
                BASE64.equals(encodingFormat) ? base64(i.vector()) : i.vector())).toList();
        return new EmbeddingList("list", data, model, new Usage(tokens, tokens));
    }

    /** OpenAI's base64 form: the float32 values' little-endian bytes. */
    static String base64(float[] vector) {
        ByteBuffer b = ByteBuffer.allocate(4 * vector.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : vector) {
            b.putFloat(f);
        }
        return Base64.getEncoder().encodeToString(b.array());
    }
}
