package io.mstar.conductor.openai;

import java.util.List;

import io.mstar.conductor.api.ApiProperties;
import io.mstar.conductor.api.SubmitRequest;
import io.mstar.conductor.error.ErrorType;

/**
 * Checks an OpenAI-route body and reduces it to what the internal submission needs. Every refusal is an
 * {@link OpenAiException} naming the field: 400 {@code invalid_input} for a bad value or an unsupported feature,
 * 404 {@code unknown_model} for a model the route does not serve. Stateless.
 */
final class Validation {

    /** OpenAI's own limit on the speech input. */
    static final int MAX_SPEECH_CHARS = 4096;

    private final OpenAiProperties routes;
    private final ApiProperties api;

    Validation(OpenAiProperties routes, ApiProperties api) {
        this.routes = routes;
        this.api = api;
    }

    record Chat(String model, String prompt, int maxTokens, SubmitRequest.Sampling sampling, Long seed, boolean stream,
            boolean includeUsage) {
    }

    record EmbeddingInputs(String model, List<String> inputs, String encodingFormat) {
    }

    record SpeechInput(String model, String input, String format, boolean stream, Long seed) {
    }

    Chat chat(ChatRequest r) {
        if (r == null) {
            throw OpenAiException.invalid(null, "a JSON object body is required");
        }
        String model = model(r.model(), routes.chatModels(), "/v1/chat/completions");
        PromptTemplate.validate(r.messages());
        if (r.n() != null && r.n() != 1) {
            throw OpenAiException.invalid("n", "'n' must be 1: one choice per request");
        }
        if (r.stop() != null && !(r.stop() instanceof List<?> l && l.isEmpty())) {
            throw OpenAiException.invalid("stop", "'stop' is not supported: the model stops at its end-of-sequence "
                    + "token or at max_tokens");
        }
        if (Boolean.TRUE.equals(r.logprobs())) {
            throw OpenAiException.invalid("logprobs", "'logprobs' is not supported");
        }
        if (r.tools() != null && !r.tools().isEmpty()) {
            throw OpenAiException.invalid("tools", "'tools' are not supported");
        }
        if (r.maxTokens() != null && r.maxCompletionTokens() != null && !r.maxTokens().equals(r.maxCompletionTokens())) {
            throw OpenAiException.invalid("max_completion_tokens", "'max_tokens' and 'max_completion_tokens' differ; "
                    + "give one");
        }
        Integer asked = r.maxCompletionTokens() != null ? r.maxCompletionTokens() : r.maxTokens();
        String tokensParam = r.maxCompletionTokens() != null ? "max_completion_tokens" : "max_tokens";
        int maxTokens = asked != null ? asked : Math.min(routes.chatDefaultMaxTokens(), api.maxTokens());
        if (maxTokens < 1 || maxTokens > api.maxTokens()) {
            throw OpenAiException.invalid(tokensParam, "'" + tokensParam + "' must be 1.." + api.maxTokens());
        }
        if (r.temperature() != null && !(r.temperature() >= 0 && r.temperature() <= 2)) {
            throw OpenAiException.invalid("temperature", "'temperature' must be 0..2");
        }
        if (r.topP() != null && !(r.topP() > 0 && r.topP() <= 1)) {
            throw OpenAiException.invalid("top_p", "'top_p' must be in (0, 1]");
        }
        if (r.topK() != null && r.topK() < 0) {
            throw OpenAiException.invalid("top_k", "'top_k' must be >= 0 (0 disables)");
        }
        boolean stream = Boolean.TRUE.equals(r.stream());
        boolean includeUsage = r.streamOptions() != null && Boolean.TRUE.equals(r.streamOptions().includeUsage());
        if (r.streamOptions() != null && !stream) {
            throw OpenAiException.invalid("stream_options", "'stream_options' needs 'stream': true");
        }
        SubmitRequest.Sampling sampling = r.temperature() == null && r.topP() == null && r.topK() == null ? null
                : new SubmitRequest.Sampling(r.temperature(), r.topK(), r.topP(), null, null);
        return new Chat(model, PromptTemplate.render(r.messages()), maxTokens, sampling, r.seed(), stream, includeUsage);
    }

    EmbeddingInputs embeddings(EmbeddingsRequest r) {
        if (r == null) {
            throw OpenAiException.invalid(null, "a JSON object body is required");
        }
        String model = model(r.model(), routes.embeddingModels(), "/v1/embeddings");
        List<String> inputs;
        if (r.input() instanceof String s) {
            inputs = List.of(s);
        } else if (r.input() instanceof List<?> list) {
            if (list.isEmpty()) {
                throw OpenAiException.invalid("input", "'input' must not be an empty array");
            }
            if (list.size() > routes.maxEmbeddingInputs()) {
                throw OpenAiException.invalid("input", "'input' has " + list.size() + " strings; at most "
                        + routes.maxEmbeddingInputs() + " per call");
            }
            for (int i = 0; i < list.size(); i++) {
                if (!(list.get(i) instanceof String)) {
                    throw OpenAiException.invalid("input", "input[" + i + "] must be a string (token-id inputs are "
                            + "not supported)");
                }
            }
            inputs = list.stream().map(String.class::cast).toList();
        } else if (r.input() == null) {
            throw OpenAiException.invalid("input", "'input' is required");
        } else {
            throw OpenAiException.invalid("input", "'input' must be a string or an array of strings");
        }
        for (int i = 0; i < inputs.size(); i++) {
            if (inputs.get(i).isEmpty()) {
                throw OpenAiException.invalid("input", "input[" + i + "] is empty");
            }
        }
        String format = r.encodingFormat() == null ? Embeddings.FLOAT : r.encodingFormat();
        if (!Embeddings.FLOAT.equals(format) && !Embeddings.BASE64.equals(format)) {
            throw OpenAiException.invalid("encoding_format", "'encoding_format' must be float or base64");
        }
        if (r.dimensions() != null) {
            throw OpenAiException.invalid("dimensions", "'dimensions' is not supported: the model's size is fixed");
        }
        return new EmbeddingInputs(model, inputs, format);
    }

    SpeechInput speech(SpeechRequest r) {
        if (r == null) {
            throw OpenAiException.invalid(null, "a JSON object body is required");
        }
        String model = model(r.model(), routes.speechModels(), "/v1/audio/speech");
        if (r.input() == null || r.input().isEmpty()) {
            throw OpenAiException.invalid("input", "'input' must be non-empty text");
        }
        if (r.input().length() > MAX_SPEECH_CHARS) {
            throw OpenAiException.invalid("input", "'input' is longer than " + MAX_SPEECH_CHARS + " characters");
        }
        String format = r.responseFormat() == null ? Speech.WAV : r.responseFormat();
        if (!Speech.WAV.equals(format) && !Speech.PCM.equals(format)) {
            throw OpenAiException.invalid("response_format", "'response_format' must be wav or pcm");
        }
        if (r.speed() != null && r.speed() != 1.0) {
            throw OpenAiException.invalid("speed", "'speed' must be 1.0");
        }
        boolean stream = Boolean.TRUE.equals(r.stream());
        if (r.streamFormat() != null) {
            if (!"audio".equals(r.streamFormat())) {
                throw OpenAiException.invalid("stream_format", "'stream_format' must be audio (no SSE audio events)");
            }
            stream = true;
        }
        return new SpeechInput(model, r.input(), format, stream, r.seed());
    }

    private static String model(String model, List<String> served, String route) {
        if (model == null || model.isBlank()) {
            throw OpenAiException.invalid("model", "'model' is required");
        }
        if (!served.contains(model)) {
            throw new OpenAiException(ErrorType.UNKNOWN_MODEL, "model", "model '" + model + "' is not served on "
                    + route + "; served there: " + served);
        }
        return model;
    }
}
