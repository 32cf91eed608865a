package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

import io.mstar.conductor.api.ApiProperties;
import io.mstar.conductor.error.ErrorType;

/** Every refusal of the three routes' bodies, with its field, and what a valid body becomes. */
class ValidationTests {

    private final Validation validation = new Validation(OpenAiProperties.defaults(),
            new ApiProperties(DataSize.ofMegabytes(8), DataSize.ofMegabytes(4), 4096, 16, true));

    private static final List<ChatRequest.Message> HI = List.of(new ChatRequest.Message("user", "hi", null));

    private static ChatRequest chat(String model, List<ChatRequest.Message> messages) {
        return new ChatRequest(model, messages, null, null, null, null, null, null, null, null, null, null, null, null, null);
    }

    /** A valid chat body with one field changed through a copy. */
    private static ChatRequest chatWith(Consumer<Object[]> change) {
        Object[] f = {"toy-tts", HI, null, null, null, null, null, null, null, null, null, null, null, null, null};
        change.accept(f);
        @SuppressWarnings("unchecked")
        ChatRequest r = new ChatRequest((String) f[0], (List<ChatRequest.Message>) f[1], (Integer) f[2], (Integer) f[3],
                (Double) f[4], (Double) f[5], (Integer) f[6], (Long) f[7], (Boolean) f[8],
                (ChatRequest.StreamOptions) f[9], (Integer) f[10], f[11], (Boolean) f[12], (List<Object>) f[13],
                (String) f[14]);
        return r;
    }

    private static void refused(Runnable call, ErrorType type, String param) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(OpenAiException.class, e -> {
            assertThat(e.type()).isEqualTo(type);
            assertThat(e.param()).isEqualTo(param);
        });
    }

    @Test
    void chatRefusesEveryUnsupportedOrOutOfRangeField() {
        refused(() -> validation.chat(null), ErrorType.INVALID_INPUT, null);
        refused(() -> validation.chat(chat(null, HI)), ErrorType.INVALID_INPUT, "model");
        refused(() -> validation.chat(chat(" ", HI)), ErrorType.INVALID_INPUT, "model");
        refused(() -> validation.chat(chat("minilm-embed", HI)), ErrorType.UNKNOWN_MODEL, "model");
        refused(() -> validation.chat(chat("toy-tts", null)), ErrorType.INVALID_INPUT, "messages");
        refused(() -> validation.chat(chat("toy-tts", List.of())), ErrorType.INVALID_INPUT, "messages");
        refused(() -> validation.chat(chat("toy-tts", List.of(new ChatRequest.Message("tool", "x", null)))),
                ErrorType.INVALID_INPUT, "messages[0].role");
        refused(() -> validation.chat(chat("toy-tts", List.of(new ChatRequest.Message(null, "x", null)))),
                ErrorType.INVALID_INPUT, "messages[0].role");
        refused(() -> validation.chat(chat("toy-tts", List.of(new ChatRequest.Message("user", "a", null),
                new ChatRequest.Message("assistant", null, null)))), ErrorType.INVALID_INPUT, "messages[1].content");
        refused(() -> validation.chat(chat("toy-tts", List.of(new ChatRequest.Message("user",
                List.of(Map.of("type", "image_url", "image_url", Map.of("url", "x"))), null)))),
                ErrorType.INVALID_INPUT, "messages[0].content");
        refused(() -> validation.chat(chat("toy-tts", List.of(new ChatRequest.Message("user", 5, null)))),
                ErrorType.INVALID_INPUT, "messages[0].content");
        refused(() -> validation.chat(chatWith(f -> f[2] = 0)), ErrorType.INVALID_INPUT, "max_tokens");
        refused(() -> validation.chat(chatWith(f -> f[2] = 4097)), ErrorType.INVALID_INPUT, "max_tokens");
        refused(() -> validation.chat(chatWith(f -> f[3] = 0)), ErrorType.INVALID_INPUT, "max_completion_tokens");
        refused(() -> validation.chat(chatWith(f -> { f[2] = 5; f[3] = 6; })), ErrorType.INVALID_INPUT,
                "max_completion_tokens");
        refused(() -> validation.chat(chatWith(f -> f[4] = -0.1)), ErrorType.INVALID_INPUT, "temperature");
        refused(() -> validation.chat(chatWith(f -> f[4] = 2.01)), ErrorType.INVALID_INPUT, "temperature");
        refused(() -> validation.chat(chatWith(f -> f[4] = Double.NaN)), ErrorType.INVALID_INPUT, "temperature");
        refused(() -> validation.chat(chatWith(f -> f[5] = 0.0)), ErrorType.INVALID_INPUT, "top_p");
        refused(() -> validation.chat(chatWith(f -> f[5] = 1.5)), ErrorType.INVALID_INPUT, "top_p");
        refused(() -> validation.chat(chatWith(f -> f[6] = -1)), ErrorType.INVALID_INPUT, "top_k");
        refused(() -> validation.chat(chatWith(f -> f[9] = new ChatRequest.StreamOptions(true))), ErrorType.INVALID_INPUT,
                "stream_options");
        refused(() -> validation.chat(chatWith(f -> f[10] = 2)), ErrorType.INVALID_INPUT, "n");
        refused(() -> validation.chat(chatWith(f -> f[10] = 0)), ErrorType.INVALID_INPUT, "n");
        refused(() -> validation.chat(chatWith(f -> f[11] = "\n")), ErrorType.INVALID_INPUT, "stop");
        refused(() -> validation.chat(chatWith(f -> f[11] = List.of("a"))), ErrorType.INVALID_INPUT, "stop");
        refused(() -> validation.chat(chatWith(f -> f[12] = true)), ErrorType.INVALID_INPUT, "logprobs");
        refused(() -> validation.chat(chatWith(f -> f[13] = List.of(Map.of("type", "function")))),
                ErrorType.INVALID_INPUT, "tools");
    }

    @Test
    void aValidChatBodyBecomesThePromptTokensAndSampling() {
        Validation.Chat plain = validation.chat(chatWith(f -> { }));
        assertThat(plain.prompt()).isEqualTo("user: hi\nassistant:");
        assertThat(plain.maxTokens()).isEqualTo(256);
        assertThat(plain.sampling()).isNull();
        assertThat(plain.stream()).isFalse();

        Validation.Chat full = validation.chat(chatWith(f -> {
            f[3] = 7; f[4] = 0.0; f[5] = 0.9; f[6] = 40; f[7] = 11L; f[8] = true;
            f[9] = new ChatRequest.StreamOptions(true); f[10] = 1; f[11] = List.of(); f[12] = false; f[13] = List.of();
        }));
        assertThat(full.maxTokens()).isEqualTo(7);
        assertThat(full.sampling().temperature()).isEqualTo(0.0);
        assertThat(full.sampling().topP()).isEqualTo(0.9);
        assertThat(full.sampling().topK()).isEqualTo(40);
        assertThat(full.seed()).isEqualTo(11L);
        assertThat(full.stream()).isTrue();
        assertThat(full.includeUsage()).isTrue();
        assertThat(validation.chat(chatWith(f -> { f[2] = 9; f[3] = 9; })).maxTokens()).isEqualTo(9);
    }

    @Test
    void theDefaultChatBudgetIsCappedByTheApiLimit() {
        Validation small = new Validation(OpenAiProperties.defaults(),
                new ApiProperties(DataSize.ofMegabytes(8), DataSize.ofMegabytes(4), 100, 16, true));
        assertThat(small.chat(chatWith(f -> { })).maxTokens()).isEqualTo(100);
    }

    @Test
    void embeddingsRefusesEveryBadInput() {
        refused(() -> validation.embeddings(null), ErrorType.INVALID_INPUT, null);
        refused(() -> validation.embeddings(new EmbeddingsRequest(null, "a", null, null, null)), ErrorType.INVALID_INPUT, "model");
        refused(() -> validation.embeddings(new EmbeddingsRequest("toy-tts", "a", null, null, null)),
                ErrorType.UNKNOWN_MODEL, "model");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", null, null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", "", null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", List.of(), null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", List.of("a", ""), null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", List.of(1, 2, 3), null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", 42, null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", java.util.Collections.nCopies(257, "a"),
                null, null, null)), ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", "a", "int8", null, null)),
                ErrorType.INVALID_INPUT, "encoding_format");
        refused(() -> validation.embeddings(new EmbeddingsRequest("minilm-embed", "a", null, 128, null)),
                ErrorType.INVALID_INPUT, "dimensions");

        assertThat(validation.embeddings(new EmbeddingsRequest("minilm-embed", "a", null, null, "u")).inputs())
                .containsExactly("a");
        Validation.EmbeddingInputs many = validation.embeddings(new EmbeddingsRequest("minilm-embed",
                java.util.Collections.nCopies(256, "b"), "base64", null, null));
        assertThat(many.inputs()).hasSize(256);
        assertThat(many.encodingFormat()).isEqualTo("base64");
    }

    @Test
    void speechRefusesEveryUnsupportedOption() {
        refused(() -> validation.speech(null), ErrorType.INVALID_INPUT, null);
        refused(() -> validation.speech(speech(null, "hi", null, null, null, null)), ErrorType.INVALID_INPUT, "model");
        refused(() -> validation.speech(speech("minilm-embed", "hi", null, null, null, null)), ErrorType.UNKNOWN_MODEL, "model");
        refused(() -> validation.speech(speech("toy-tts", null, null, null, null, null)), ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.speech(speech("toy-tts", "", null, null, null, null)), ErrorType.INVALID_INPUT, "input");
        refused(() -> validation.speech(speech("toy-tts", "x".repeat(4097), null, null, null, null)),
                ErrorType.INVALID_INPUT, "input");
        for (String format : List.of("mp3", "opus", "aac", "flac", "WAV")) {
            refused(() -> validation.speech(speech("toy-tts", "hi", format, null, null, null)), ErrorType.INVALID_INPUT,
                    "response_format");
        }
        refused(() -> validation.speech(speech("toy-tts", "hi", null, 1.5, null, null)), ErrorType.INVALID_INPUT, "speed");
        refused(() -> validation.speech(speech("toy-tts", "hi", null, null, null, "sse")), ErrorType.INVALID_INPUT,
                "stream_format");

        Validation.SpeechInput wav = validation.speech(speech("toy-tts", "hi", null, 1.0, null, null));
        assertThat(wav.format()).isEqualTo("wav");
        assertThat(wav.stream()).isFalse();
        assertThat(validation.speech(speech("toy-tts", "hi", "pcm", null, true, null)).stream()).isTrue();
        assertThat(validation.speech(speech("toy-tts", "hi", "pcm", null, null, "audio")).stream()).isTrue();
    }

    private static SpeechRequest speech(String model, String input, String format, Double speed, Boolean stream,
            String streamFormat) {
        return new SpeechRequest(model, input, "alloy", format, speed, stream, streamFormat, null, null);
    }
}
