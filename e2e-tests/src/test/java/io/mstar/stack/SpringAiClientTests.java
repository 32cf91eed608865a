package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.openai.errors.BadRequestException;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.ai.audio.tts.TextToSpeechPrompt;
import org.springframework.ai.audio.tts.TextToSpeechResponse;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.embedding.EmbeddingResponse;
import org.springframework.ai.openai.OpenAiAudioSpeechModel;
import org.springframework.ai.openai.OpenAiAudioSpeechOptions;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.openai.OpenAiEmbeddingModel;
import org.springframework.ai.openai.OpenAiEmbeddingOptions;

/**
 * A real OpenAI client library against the conductor's OpenAI-compatible routes: Spring AI 2.0's OpenAI models
 * (built on the official {@code openai-java} SDK), configured programmatically as a Spring AI user would, with only
 * the base URL pointed at the local stack and a dummy API key. A real broker, the conductor and two workers with the
 * default deployment ({@code minilm-embed}, {@code toy-tts}); no Spring context.
 */
@Tag("kafka")
class SpringAiClientTests {

    private static final Duration SETTLE = Duration.ofSeconds(20);
    private static final String API_KEY = "not-checked";
    private static final int MAX_TOKENS = 48;

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    /** OpenAI's base URL ends in {@code /v1}; the SDK appends {@code /embeddings}, {@code /chat/completions}, … */
    private static String baseUrl;

    @BeforeAll
    static void pointAtTheConductor() {
        baseUrl = STACK.stack().conductor().baseUrl() + "/v1";
    }

    @AfterEach
    void everyProcessIsBackToBaseline() {
        Leaks.awaitBaseline(STACK.stack(), SETTLE);
    }

    @Test
    void embeddingsAreUnitVectorsOf384WithTheParaphraseNearerThanTheUnrelatedSentence() {
        OpenAiEmbeddingModel embeddings = OpenAiEmbeddingModel.builder()
                .options(OpenAiEmbeddingOptions.builder().baseUrl(baseUrl).apiKey(API_KEY).model("minilm-embed")
                        .maxRetries(0).build())
                .build();

        // the SDK asks for encoding_format "base64" and decodes the little-endian float32 bytes itself
        EmbeddingResponse response = embeddings.embedForResponse(List.of("a cat sits on the mat",
                "a kitten is on a rug", "stock markets fell", "a cat sits on the mat"));
        assertThat(response.getResults()).hasSize(4);
        assertThat(response.getMetadata().getModel()).isEqualTo("minilm-embed");
        float[][] v = new float[4][];
        for (int i = 0; i < 4; i++) {
            assertThat(response.getResults().get(i).getIndex()).isEqualTo(i);
            v[i] = response.getResults().get(i).getOutput();
            assertThat(v[i]).hasSize(384);
            assertThat(dot(v[i], v[i])).isCloseTo(1.0, Offset.offset(1e-4));
        }
        assertThat(dot(v[0], v[1])).as("cat~kitten vs cat~stocks").isGreaterThan(dot(v[0], v[2]) + 0.2);
        assertThat(v[3]).as("the same sentence twice").containsExactly(v[0]);
        // each sentence counts at least [CLS], one word-piece and [SEP]
        assertThat(response.getMetadata().getUsage().getPromptTokens()).isGreaterThanOrEqualTo(4 * 3);

        // the single-text convenience and the model's dimension probe, as an application would use them
        assertThat(embeddings.embed("a cat sits on the mat")).containsExactly(v[0]);
        assertThat(embeddings.dimensions()).isEqualTo(384);
    }

    @Test
    void aBlockingChatCallAnswersTextWithAFinishReasonAndUsageWithinMaxTokensAndTheSameSeedGivesTheSameText() {
        OpenAiChatModel chat = chatModel();

        ChatResponse first = chat.call(new Prompt("Hello there", chatOptions(1234)));
        Generation answer = first.getResult();
        String text = answer.getOutput().getText();
        assertThat(text).isNotEmpty();
        var usage = first.getMetadata().getUsage();
        assertThat(usage.getCompletionTokens()).isBetween(1, MAX_TOKENS);
        // the prompt is rendered as "user: Hello there\nassistant:", one token per byte
        assertThat(usage.getPromptTokens()).isEqualTo("user: Hello there\nassistant:".length());
        assertThat(usage.getTotalTokens()).isEqualTo(usage.getPromptTokens() + usage.getCompletionTokens());
        assertThat(answer.getMetadata().getFinishReason())
                .isEqualTo(usage.getCompletionTokens() == MAX_TOKENS ? "LENGTH" : "STOP");
        assertThat(first.getMetadata().getModel()).isEqualTo("toy-tts");
        assertThat(first.getMetadata().getId()).startsWith("chatcmpl-");

        ChatResponse again = chat.call(new Prompt("Hello there", chatOptions(1234)));
        assertThat(again.getResult().getOutput().getText()).isEqualTo(text);
        assertThat(again.getMetadata().getUsage().getCompletionTokens()).isEqualTo(usage.getCompletionTokens());
        assertThat(again.getMetadata().getId()).isNotEqualTo(first.getMetadata().getId());
    }

    @Test
    void theStreamedContentConcatenatedIsTheBlockingAnswerForTheSameSeed() {
        OpenAiChatModel chat = chatModel();
        ChatResponse whole = chat.call(new Prompt("Hello there", chatOptions(4321)));

        List<ChatResponse> streamed = chat.stream(new Prompt("Hello there", chatOptions(4321)))
                .collectList().block(Duration.ofSeconds(120));
        assertThat(streamed).isNotEmpty();
        StringBuilder content = new StringBuilder();
        String finish = null;
        for (ChatResponse r : streamed) {
            for (Generation g : r.getResults()) {
                content.append(Objects.requireNonNullElse(g.getOutput().getText(), ""));
                if (g.getMetadata().getFinishReason() != null) {
                    finish = g.getMetadata().getFinishReason();
                }
            }
        }
        assertThat(content.toString()).isEqualTo(whole.getResult().getOutput().getText());
        assertThat(finish).isEqualTo(whole.getResult().getMetadata().getFinishReason());
        // Spring AI asks for stream_options.include_usage; the usage chunk comes last
        var usage = streamed.get(streamed.size() - 1).getMetadata().getUsage();
        assertThat(usage.getCompletionTokens()).isEqualTo(whole.getMetadata().getUsage().getCompletionTokens());
        assertThat(usage.getPromptTokens()).isEqualTo(whole.getMetadata().getUsage().getPromptTokens());
    }

    @Test
    void speechComesBackAsA16kHzMonoInt16Wav() {
        OpenAiAudioSpeechModel speech = OpenAiAudioSpeechModel.builder()
                .options(OpenAiAudioSpeechOptions.builder().baseUrl(baseUrl).apiKey(API_KEY).model("toy-tts")
                        .voice("alloy").responseFormat(OpenAiAudioSpeechOptions.AudioResponseFormat.WAV)
                        .maxRetries(0).build())
                .build();

        byte[] wav = speech.call("Hello there");
        assertWavHeader(wav);
        ByteBuffer h = ByteBuffer.wrap(wav).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(h.getInt(4)).as("RIFF size").isEqualTo(wav.length - 8);
        assertThat(h.getInt(40)).as("data size").isEqualTo(wav.length - 44);
        assertThat(wav.length - 44).isPositive().isEven();

        // stream(...) sends stream_format "audio": the same WAV layout, sizes unknown (0xFFFFFFFF) up front
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        List<TextToSpeechResponse> parts = speech.stream(new TextToSpeechPrompt("Hello there"))
                .collectList().block(Duration.ofSeconds(120));
        parts.forEach(p -> streamed.writeBytes(p.getResult().getOutput()));
        byte[] s = streamed.toByteArray();
        assertWavHeader(s);
        ByteBuffer sh = ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(sh.getInt(4)).isEqualTo(-1);
        assertThat(sh.getInt(40)).isEqualTo(-1);
        assertThat(s.length - 44).isPositive().isEven();
    }

    @Test
    void theLibrarysDefaultMp3FormatIsRefusedWithAnOpenAiErrorThatTheSdkReadsFieldByField() {
        // Spring AI's speech options default to OpenAI's default, mp3, which the conductor does not offer
        OpenAiAudioSpeechModel speech = OpenAiAudioSpeechModel.builder()
                .options(OpenAiAudioSpeechOptions.builder().baseUrl(baseUrl).apiKey(API_KEY).model("toy-tts")
                        .maxRetries(0).build())
                .build();
        assertThat(speech.getOptions().getResponseFormat()).isEqualTo("mp3");

        BadRequestException refused = catchThrowableOfType(BadRequestException.class, () -> speech.call("Hello there"));
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.type()).contains("invalid_request_error");
        assertThat(refused.param()).contains("response_format");
        assertThat(refused.code()).contains("invalid_input");
        assertThat(refused.getMessage()).contains("'response_format' must be wav or pcm");
    }

    private static OpenAiChatModel chatModel() {
        return OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder().baseUrl(baseUrl).apiKey(API_KEY).model("toy-tts")
                        .maxRetries(0).build())
                .build();
    }

    /** The settings the conductor honours (docs/openai-api.md); top_k is its extension, sent as an extra field. */
    private static OpenAiChatOptions chatOptions(int seed) {
        return OpenAiChatOptions.builder().model("toy-tts").maxTokens(MAX_TOKENS).temperature(0.8).seed(seed)
                .extraBody(Map.of("top_k", 40)).build();
    }

    private static void assertWavHeader(byte[] wav) {
        assertThat(wav.length).isGreaterThanOrEqualTo(44);
        ByteBuffer h = ByteBuffer.wrap(wav).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(ascii(wav, 0)).isEqualTo("RIFF");
        assertThat(ascii(wav, 8)).isEqualTo("WAVE");
        assertThat(ascii(wav, 12)).isEqualTo("fmt ");
        assertThat(h.getInt(16)).as("fmt size").isEqualTo(16);
        assertThat(h.getShort(20)).as("PCM").isEqualTo((short) 1);
        assertThat(h.getShort(22)).as("channels").isEqualTo((short) 1);
        assertThat(h.getInt(24)).as("sample rate").isEqualTo(16000);
        assertThat(h.getInt(28)).as("byte rate").isEqualTo(32000);
        assertThat(h.getShort(32)).as("block align").isEqualTo((short) 2);
        assertThat(h.getShort(34)).as("bits per sample").isEqualTo((short) 16);
        assertThat(ascii(wav, 36)).isEqualTo("data");
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (double) a[i] * b[i];
        }
        return s;
    }

    private static String ascii(byte[] bytes, int at) {
        return new String(bytes, at, 4, StandardCharsets.US_ASCII);
    }
}
