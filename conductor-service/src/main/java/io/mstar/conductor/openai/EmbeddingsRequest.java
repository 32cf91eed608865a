package io.mstar.conductor.openai;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The body of {@code POST /v1/embeddings} (OpenAI's shape).
 *
 * @param input          a string or an array of strings (token-id arrays are refused)
 * @param encodingFormat {@code float} (default) or {@code base64} (little-endian float32 bytes)
 * @param dimensions     refused unless absent: the model's dimension is fixed
 * @param user           accepted and ignored
 */
public record EmbeddingsRequest(@JsonProperty("model") String model, @JsonProperty("input") Object input,
        @JsonProperty("encoding_format") String encodingFormat, @JsonProperty("dimensions") Integer dimensions,
        @JsonProperty("user") String user) {
}
