package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAI-compatible routes end to end (docs/openai-api.md): a real broker, the conductor and two workers with
 * the default deployment serving {@code minilm-embed} and {@code toy-tts}; real HTTP, nothing shared.
 */
@Tag("kafka")
class OpenAiRoutesTests {

    private static final Duration SETTLE = Duration.ofSeconds(20);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    private static ExecutorService executor;
    private static HttpClient http;
    private static String base;

    @BeforeAll
    static void connect() {
        executor = Executors.newCachedThreadPool();
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor)
                .connectTimeout(Duration.ofSeconds(5)).build();
        base = STACK.stack().conductor().baseUrl();
    }

    @AfterAll
    static void disconnect() {
        executor.shutdownNow();
    }

    @AfterEach
    void everyProcessIsBackToBaseline() {
        Leaks.awaitBaseline(STACK.stack(), SETTLE);
    }

    @Test
    void modelsListsBothModelsInBothShapes() throws Exception {
        JsonNode models = JSON.readTree(get("/v1/models").body());
        assertThat(models.at("/object").asString()).isEqualTo("list");
        List<String> ids = new ArrayList<>();
        models.at("/data").forEach(m -> {
            assertThat(m.at("/object").asString()).isEqualTo("model");
            assertThat(m.at("/owned_by").asString()).isNotEmpty();
            assertThat(m.at("/created").isNumber()).isTrue();
            ids.add(m.at("/id").asString());
        });
        assertThat(ids).contains("minilm-embed", "toy-tts");
        List<String> names = new ArrayList<>();
        models.at("/models").forEach(m -> names.add(m.at("/name").asString()));
        assertThat(names).containsExactlyElementsOf(ids);
    }

    @Test
    void embeddingsAreUnitVectorsThatPutTheCatNearTheKitten() throws Exception {
        HttpResponse<byte[]> r = post("/v1/embeddings", "{\"model\":\"minilm-embed\",\"input\":[\"a cat sits on the mat\","
                + "\"a kitten is on a rug\",\"stock markets fell\"]}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode list = JSON.readTree(r.body());
        assertThat(list.at("/object").asString()).isEqualTo("list");
        assertThat(list.at("/model").asString()).isEqualTo("minilm-embed");
        float[][] v = new float[3][];
        for (int i = 0; i < 3; i++) {
            JsonNode e = list.at("/data/" + i);
            assertThat(e.at("/index").asInt()).isEqualTo(i);
            assertThat(e.at("/object").asString()).isEqualTo("embedding");
            assertThat(e.at("/embedding").size()).isEqualTo(384);
            v[i] = new float[384];
            for (int k = 0; k < 384; k++) {
                v[i][k] = e.at("/embedding/" + k).floatValue();
            }
            assertThat(dot(v[i], v[i])).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-4));
        }
        assertThat(dot(v[0], v[1])).isGreaterThan(dot(v[0], v[2]));
        // each sentence counts at least [CLS], one word-piece and [SEP]
        assertThat(list.at("/usage/prompt_tokens").asInt()).isGreaterThanOrEqualTo(3 * 3);
        assertThat(list.at("/usage/total_tokens").asInt()).isEqualTo(list.at("/usage/prompt_tokens").asInt());

        JsonNode b64 = JSON.readTree(post("/v1/embeddings", "{\"model\":\"minilm-embed\",\"input\":\"a cat sits on the mat\","
                + "\"encoding_format\":\"base64\"}").body());
        ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(b64.at("/data/0/embedding").asString()))
                .order(ByteOrder.LITTLE_ENDIAN);
        assertThat(bytes.remaining()).isEqualTo(4 * 384);
        for (int k = 0; k < 384; k++) {
            assertThat(bytes.getFloat()).isCloseTo(v[0][k], org.assertj.core.data.Offset.offset(1e-6f));
        }
    }

    @Test
    void aStreamedChatCompletionIsSseEndingWithDoneAndMatchesTheWholeAnswerForTheSameSeed() throws Exception {
        String body = "{\"model\":\"toy-tts\",\"max_tokens\":48,\"seed\":1234,\"temperature\":0.8,\"top_k\":40,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]%s}";
        JsonNode whole = JSON.readTree(post("/v1/chat/completions", String.format(body, "")).body());
        assertThat(whole.at("/object").asString()).isEqualTo("chat.completion");
        String text = whole.at("/choices/0/message/content").asString();
        int tokens = whole.at("/usage/completion_tokens").asInt();
        assertThat(tokens).isBetween(0, 48);
        assertThat(whole.at("/choices/0/finish_reason").asString()).isEqualTo(tokens == 48 ? "length" : "stop");

        HttpResponse<java.io.InputStream> r = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(String.format(body,
                        ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"))).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        List<String> events = new ArrayList<>();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            String line;
            boolean blankExpected = false;
            while ((line = lines.readLine()) != null) {
                if (blankExpected) {
                    assertThat(line).isEmpty();
                    blankExpected = false;
                    continue;
                }
                assertThat(line).startsWith("data: ");
                events.add(line.substring("data: ".length()));
                blankExpected = true;
            }
        }
        assertThat(events).last().isEqualTo("[DONE]");
        List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(JSON::readTree).toList();
        assertThat(chunks.get(0).at("/choices/0/delta/role").asString()).isEqualTo("assistant");
        StringBuilder streamed = new StringBuilder();
        String finish = null;
        for (JsonNode c : chunks) {
            assertThat(c.at("/object").asString()).isEqualTo("chat.completion.chunk");
            streamed.append(c.at("/choices/0/delta/content").asString(""));
            if (c.at("/choices/0/finish_reason").isString()) {
                finish = c.at("/choices/0/finish_reason").asString();
            }
        }
        assertThat(streamed.toString()).isEqualTo(text);
        assertThat(finish).isEqualTo(whole.at("/choices/0/finish_reason").asString());
        assertThat(chunks.get(chunks.size() - 1).at("/usage/completion_tokens").asInt()).isEqualTo(tokens);
    }

    @Test
    void speechIsAValidWavWhoseSamplesAreTheAudioChunksOfTheSameRequest() throws Exception {
        String speech = "{\"model\":\"toy-tts\",\"input\":\"Hello there\",\"voice\":\"alloy\",\"seed\":99%s}";
        HttpResponse<byte[]> r = post("/v1/audio/speech", String.format(speech, ""));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("audio/wav");
        byte[] wav = r.body();
        ByteBuffer h = ByteBuffer.wrap(wav).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(ascii(wav, 0)).isEqualTo("RIFF");
        assertThat(h.getInt(4)).isEqualTo(wav.length - 8);
        assertThat(ascii(wav, 8)).isEqualTo("WAVE");
        assertThat(ascii(wav, 12)).isEqualTo("fmt ");
        assertThat(h.getInt(16)).isEqualTo(16);
        assertThat(h.getShort(20)).isEqualTo((short) 1);
        assertThat(h.getShort(22)).isEqualTo((short) 1);
        assertThat(h.getInt(24)).isEqualTo(16000);
        assertThat(h.getInt(28)).isEqualTo(32000);
        assertThat(h.getShort(32)).isEqualTo((short) 2);
        assertThat(h.getShort(34)).isEqualTo((short) 16);
        assertThat(ascii(wav, 36)).isEqualTo("data");
        assertThat(h.getInt(40)).isEqualTo(wav.length - 44);
        assertThat(wav.length - 44).isPositive().isEven();

        // the same request through /v1/requests: the WAV's samples are exactly its audio chunks, in order
        HttpResponse<byte[]> internal = post("/v1/requests", "{\"model\":\"toy-tts\",\"inputs\":{\"text\":{\"text\":"
                + "\"Hello there\"}},\"outputs\":[\"audio\"],\"max_tokens\":512,\"seed\":99}");
        assertThat(internal.statusCode()).isEqualTo(200);
        java.io.ByteArrayOutputStream samples = new java.io.ByteArrayOutputStream();
        long shapeTotal = 0;
        for (JsonNode c : JSON.readTree(internal.body()).at("/outputs")) {
            if ("audio".equals(c.at("/modality").asString())) {
                samples.writeBytes(Base64.getDecoder().decode(c.at("/data").asString()));
                shapeTotal += c.at("/metadata/shape/0").asLong();
            }
        }
        assertThat(wav.length - 44).isEqualTo(samples.size()).isEqualTo((int) (2 * shapeTotal));
        assertThat(java.util.Arrays.copyOfRange(wav, 44, wav.length)).isEqualTo(samples.toByteArray());

        byte[] streamed = post("/v1/audio/speech", String.format(speech, ",\"stream\":true")).body();
        ByteBuffer sh = ByteBuffer.wrap(streamed).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(sh.getInt(4)).isEqualTo(-1);
        assertThat(sh.getInt(40)).isEqualTo(-1);
        assertThat(java.util.Arrays.copyOfRange(streamed, 44, streamed.length)).isEqualTo(samples.toByteArray());
    }

    @Test
    void refusalsAreOpenAiErrors() throws Exception {
        HttpResponse<byte[]> n = post("/v1/chat/completions", "{\"model\":\"toy-tts\",\"n\":2,\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(n.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(n.body()).at("/error/param").asString()).isEqualTo("n");
        HttpResponse<byte[]> unknown = post("/v1/embeddings", "{\"model\":\"toy-tts\",\"input\":\"a\"}");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknown.body()).at("/error/code").asString()).isEqualTo("model_not_found");
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

    private static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<byte[]> post(String path, String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }
}
