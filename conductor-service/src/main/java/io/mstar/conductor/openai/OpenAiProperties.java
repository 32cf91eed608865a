package io.mstar.conductor.openai;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The OpenAI-compatible routes ({@code mstar.conductor.openai.*}): which served models each route accepts and the
 * route-specific limits. The body-size and input-byte limits are the public API's ({@code mstar.conductor.api.*}).
 *
 * @param embeddingModels      models {@code POST /v1/embeddings} accepts (default {@code minilm-embed})
 * @param chatModels           models {@code POST /v1/chat/completions} accepts (default {@code toy-tts})
 * @param speechModels         models {@code POST /v1/audio/speech} accepts (default {@code toy-tts})
 * @param maxEmbeddingInputs   most strings in one embeddings call (default 256); more is 400
 * @param chatDefaultMaxTokens {@code max_tokens} of a chat completion that gives none (default 256, at most
 *                             {@code mstar.conductor.api.max-tokens})
 * @param speechMaxTokens      the token budget of a speech request (default 512): the OpenAI speech API has no
 *                             {@code max_tokens}, so the route gives the model this one
 */
@ConfigurationProperties("mstar.conductor.openai")
public record OpenAiProperties(@DefaultValue("minilm-embed") List<String> embeddingModels,
        @DefaultValue("toy-tts") List<String> chatModels, @DefaultValue("toy-tts") List<String> speechModels,
        @DefaultValue("256") int maxEmbeddingInputs, @DefaultValue("256") int chatDefaultMaxTokens,
        @DefaultValue("512") int speechMaxTokens) {

    public OpenAiProperties {
        embeddingModels = List.copyOf(embeddingModels);
        chatModels = List.copyOf(chatModels);
        speechModels = List.copyOf(speechModels);
        if (maxEmbeddingInputs < 1 || chatDefaultMaxTokens < 1 || speechMaxTokens < 1) {
            throw new IllegalArgumentException("mstar.conductor.openai: limits must be at least 1");
        }
    }

    /** The defaults, for code that builds the routes without Spring. */
    public static OpenAiProperties defaults() {
        return new OpenAiProperties(List.of("minilm-embed"), List.of("toy-tts"), List.of("toy-tts"), 256, 256, 512);
    }
}
