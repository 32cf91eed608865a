package io.mstar.conductor.openai;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The body of {@code POST /v1/chat/completions} (OpenAI's shape). Unknown fields are ignored; the fields below that
 * the route cannot honour are refused (see docs/openai-api.md).
 *
 * @param content a string, or a list of content parts of which only {@code {"type":"text","text":...}} is taken
 * @param stop    refused when given (the engines have no stop strings)
 * @param topK    extension: top-k sampling (0 disables)
 */
public record ChatRequest(@JsonProperty("model") String model, @JsonProperty("messages") List<Message> messages,
        @JsonProperty("max_tokens") Integer maxTokens,
        @JsonProperty("max_completion_tokens") Integer maxCompletionTokens,
        @JsonProperty("temperature") Double temperature, @JsonProperty("top_p") Double topP,
        @JsonProperty("top_k") Integer topK, @JsonProperty("seed") Long seed, @JsonProperty("stream") Boolean stream,
        @JsonProperty("stream_options") StreamOptions streamOptions, @JsonProperty("n") Integer n,
        @JsonProperty("stop") Object stop, @JsonProperty("logprobs") Boolean logprobs,
        @JsonProperty("tools") List<Object> tools, @JsonProperty("user") String user) {

    public record Message(@JsonProperty("role") String role, @JsonProperty("content") Object content,
            @JsonProperty("name") String name) {
    }

    /** {@code include_usage}: a last chunk with {@code choices: []} and the usage, before {@code [DONE]}. */
    public record StreamOptions(@JsonProperty("include_usage") Boolean includeUsage) {
    }
}
