package io.mstar.conductor.api;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The body of {@code POST /v1/requests}. Unknown fields are ignored.
 *
 * @param model       the model name (required)
 * @param inputs      input name to value (required)
 * @param outputs     output modalities wanted; empty or absent: every modality the model emits
 * @param maxTokens   output-token budget
 * @param sampling    sampling parameters
 * @param requestId   optional id, 1–128 of {@code [A-Za-z0-9._:-]}; a random UUID otherwise
 * @param deadlineMs  optional deadline in milliseconds from submission (capped by the deployment's request timeout)
 * @param seed        optional explicit seed; otherwise derived from the request id
 * @param modelKwargs model-specific arguments (scalars, passed on as strings)
 * @param stream      stream chunks (NDJSON, or SSE with {@code Accept: text/event-stream}) instead of one answer
 */
public record SubmitRequest(@JsonProperty("model") String model, @JsonProperty("inputs") Map<String, Input> inputs,
        @JsonProperty("outputs") List<String> outputs, @JsonProperty("max_tokens") Integer maxTokens,
        @JsonProperty("sampling") Sampling sampling, @JsonProperty("request_id") String requestId,
        @JsonProperty("deadline_ms") Long deadlineMs, @JsonProperty("seed") Long seed,
        @JsonProperty("model_kwargs") Map<String, Object> modelKwargs, @JsonProperty("stream") Boolean stream) {

    /**
     * One input: exactly one of {@code text} (UTF-8 bytes, dtype uint8), {@code tokens} (int32 token ids) or
     * {@code base64} (raw little-endian bytes with {@code dtype} and {@code shape}).
     */
    public record Input(@JsonProperty("text") String text, @JsonProperty("tokens") List<Long> tokens,
            @JsonProperty("base64") String base64, @JsonProperty("dtype") String dtype,
            @JsonProperty("shape") List<Long> shape) {
    }

    /** Sampling parameters; absent fields keep the engines' defaults. */
    public record Sampling(@JsonProperty("temperature") Double temperature, @JsonProperty("top_k") Integer topK,
            @JsonProperty("top_p") Double topP, @JsonProperty("repetition_penalty") Double repetitionPenalty,
            @JsonProperty("ignore_eos") Boolean ignoreEos) {
    }
}
