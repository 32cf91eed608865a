package io.mstar.conductor.openai;

import static io.mstar.conductor.api.PlayedWorkers.W0;
import static io.mstar.conductor.api.PlayedWorkers.W1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import io.mstar.conductor.api.ConductorOverHttp;
import io.mstar.conductor.api.PlayedWorkers;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.conductor.lifecycle.RequestState;
import io.mstar.conductor.lifecycle.RequestView;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.model.ModelGraphs;
import io.mstar.wire.FailRequests;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAI routes over real HTTP against the real conductor (lifecycle loop, tensor store, tensor reads). The
 * real models are not in this module, so the routes are pointed at the built-in counter model, whose walks this
 * test plays in-process as CounterOverHttpTests does; the played workers emit the outputs the real models emit by
 * contract (text bytes, float32 embedding + num_tokens, int16 audio with sample_rate/channels) from a real tensor
 * server the conductor reads. The counter's one int32 input takes the prompt as byte tokens.
 */
@ConductorOverHttp(properties = {"mstar.conductor.api.max-body-size=4KB", "mstar.conductor.api.max-input-bytes=1KB",
        "mstar.conductor.openai.embedding-models=counter", "mstar.conductor.openai.chat-models=counter",
        "mstar.conductor.openai.speech-models=counter", "mstar.conductor.openai.speech-max-tokens=1",
        "mstar.conductor.openai.max-embedding-inputs=5", "mstar.deployment.config=" + OpenAiRoutesHttpTests.DEPLOYMENT})
class OpenAiRoutesHttpTests {

    /** Counter only, at most 3 active and 1 queued request (module-relative: surefire runs in the module). */
    static final String DEPLOYMENT = "src/test/resources/openai-routes-deployment.yaml";
    private static final List<WorkerGraph> WGS = WorkerGraphSplit.split(DeploymentConfig.load(java.nio.file.Path.of(DEPLOYMENT)),
            ModelGraphs.of(List.of("counter")));
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String PROMPT = "user: hi\nassistant:";

    @Autowired
    WebTestClient web;
    @Autowired
    LifecycleLoop loop;
    @LocalServerPort
    int port;

    private final Set<String> played = new HashSet<>();
    private PlayedWorkers workers;

    /** One output a played worker emits: signal name, modality, dtype, little-endian bytes, worker metadata. */
    record Out(String signal, String modality, String dtype, byte[] bytes, Map<String, String> metadata) {

        static Out text(int... values) {
            ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
            Arrays.stream(values).forEach(b::putInt);
            return new Out("text", "text", "int32", b.array(), Map.of());
        }

        static Out embedding(float... values) {
            ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
            for (float v : values) {
                b.putFloat(v);
            }
            return new Out("embedding", "embedding", "float32", b.array(), Map.of());
        }

        static Out numTokens(int n) {
            return new Out("num_tokens", "usage", "int32", ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN)
                    .putInt(n).array(), Map.of());
        }

        static Out audio(int sampleRate, short... samples) {
            ByteBuffer b = ByteBuffer.allocate(2 * samples.length).order(ByteOrder.LITTLE_ENDIAN);
            for (short s : samples) {
                b.putShort(s);
            }
            return new Out("audio", "audio", "int16", b.array(), Map.of("sample_rate", String.valueOf(sampleRate),
                    "channels", "1"));
        }
    }

    @BeforeEach
    void setUp() {
        // WebTestClient's 5 s default is a test's whole answer time on a loaded two-core runner, first request included.
        web = web.mutate().responseTimeout(Duration.ofSeconds(30)).build();
        workers = PlayedWorkers.servingTensors(loop, 5);
        workers.setUp();
    }

    @AfterEach
    void tearDown() {
        played.forEach(workers::readsDone);
        for (String id : played) {
            await().atMost(Duration.ofSeconds(10)).until(() -> loop.askRequests(r -> r.view(id).state()).block()
                    == RequestState.REMOVED);
        }
        assertThat(loop.askRequests(RequestLifecycle::liveRequests).block()).isZero();
        assertThat(loop.askRequests(RequestLifecycle::liveInputTensors).block()).isZero();
        workers.close();
    }

    @Test
    void modelsAreListedInOpenAisShapeAndTheConductorsOwn() {
        web.get().uri("/v1/models").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.object").isEqualTo("list")
                .jsonPath("$.data[0].id").isEqualTo("counter")
                .jsonPath("$.data[0].object").isEqualTo("model")
                .jsonPath("$.data[0].owned_by").isEqualTo("mstar")
                .jsonPath("$.data[0].created").isNumber()
                .jsonPath("$.models[0].name").isEqualTo("counter");
        web.get().uri("/openapi.json").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.paths['/v1/embeddings'].post.requestBody").exists()
                .jsonPath("$.paths['/v1/chat/completions'].post.responses['200'].content['text/event-stream']").exists()
                .jsonPath("$.paths['/v1/audio/speech'].post.responses['200'].content['audio/wav']").exists()
                .jsonPath("$.components.schemas.ModelList.properties.data").exists();
    }

    @Test
    void aChatCompletionCarriesTheDecodedTextTheFinishReasonAndUsage() {
        // "hé" is 3 bytes; é arrives split over two chunks; 3 tokens of max_tokens 3: length
        playNext("chatcmpl-", 3, List.of(Out.text('h'), Out.text(0xc3), Out.text(0xa9)));
        JsonNode c = postJson("/v1/chat/completions", "{\"model\":\"counter\",\"max_tokens\":3,\"seed\":4,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", 200);
        assertThat(c.at("/object").asString()).isEqualTo("chat.completion");
        assertThat(c.at("/id").asString()).startsWith("chatcmpl-");
        assertThat(c.at("/model").asString()).isEqualTo("counter");
        assertThat(c.at("/choices/0/message/role").asString()).isEqualTo("assistant");
        assertThat(c.at("/choices/0/message/content").asString()).isEqualTo("hé");
        assertThat(c.at("/choices/0/finish_reason").asString()).isEqualTo("length");
        assertThat(c.at("/usage/prompt_tokens").asInt()).isEqualTo(PROMPT.length());
        assertThat(c.at("/usage/completion_tokens").asInt()).isEqualTo(3);
        assertThat(c.at("/usage/total_tokens").asInt()).isEqualTo(PROMPT.length() + 3);

        playNext("chatcmpl-", 4, List.of(Out.text('o', 'k')));
        JsonNode stopped = postJson("/v1/chat/completions", "{\"model\":\"counter\",\"max_completion_tokens\":4,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", 200);
        assertThat(stopped.at("/choices/0/message/content").asString()).isEqualTo("ok");
        assertThat(stopped.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
    }

    @Test
    void aStreamedChatCompletionIsSseChunksEndingWithDone() {
        // "€" is three bytes, sent one at a time: one delta
        playNext("chatcmpl-", 4, List.of(Out.text('a'), Out.text(0xe2), Out.text(0x82), Out.text(0xac)));
        byte[] body = web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"stream\":true,\"max_tokens\":4,\"stream_options\":"
                        + "{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectBody(byte[].class).returnResult().getResponseBody();
        String text = new String(body, StandardCharsets.UTF_8);
        List<String> frames = List.of(text.split("\n\n", -1));
        assertThat(frames.get(frames.size() - 1)).isEmpty();
        List<String> events = frames.subList(0, frames.size() - 1);
        assertThat(events).allMatch(e -> e.startsWith("data: ") && !e.contains("\n"));
        assertThat(events).last().isEqualTo("data: [DONE]");
        List<JsonNode> chunks = events.subList(0, events.size() - 1).stream()
                .map(e -> JSON.readTree(e.substring("data: ".length()))).toList();
        assertThat(chunks).allMatch(c -> c.at("/object").asString().equals("chat.completion.chunk"));
        assertThat(chunks.get(0).at("/choices/0/delta/role").asString()).isEqualTo("assistant");
        StringBuilder content = new StringBuilder();
        chunks.forEach(c -> content.append(c.at("/choices/0/delta/content").asString("")));
        assertThat(content.toString()).isEqualTo("a€");
        assertThat(chunks).filteredOn(c -> c.at("/choices/0/delta/content").asString("").contains("\uFFFD")).isEmpty();
        assertThat(chunks.get(chunks.size() - 2).at("/choices/0/finish_reason").asString()).isEqualTo("length");
        assertThat(chunks.get(chunks.size() - 1).at("/usage/completion_tokens").asInt()).isEqualTo(4);
    }

    @Test
    void aStreamThatFailsBeforeItsFirstTokenIsAnHttpErrorInOpenAisShape() {
        Thread failer = new Thread(() -> {
            String id = awaitRunning("chatcmpl-");
            played.add(id);
            workers.deliver(W1, new FailRequests(Map.of(id, "boom")));
        });
        failer.setDaemon(true);
        failer.start();
        JsonNode error = postJson("/v1/chat/completions", "{\"model\":\"counter\",\"stream\":true,\"max_tokens\":2,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", 502);
        assertThat(error.at("/error/code").asString()).isEqualTo("worker_failed");
        assertThat(error.at("/error/type").asString()).isEqualTo("server_error");
        assertThat(error.at("/error/message").asString()).contains("boom");
    }

    @Test
    void embeddingsOfSeveralInputsRunAsConcurrentRequestsAndComeBackInInputOrder() {
        Thread players = new Thread(() -> {
            // two requests live at once; which input each one is does not matter to the order of the answer
            String first = awaitRunning("embd-");
            String second = awaitRunning("embd-");
            play(first, 1, List.of(Out.embedding(0.6f, 0.8f), Out.numTokens(3)));
            play(second, 1, List.of(Out.numTokens(5), Out.embedding(0.6f, 0.8f)));
        });
        players.setDaemon(true);
        players.start();
        JsonNode list = postJson("/v1/embeddings", "{\"model\":\"counter\",\"input\":[\"a cat\",\"a dog\"],\"user\":\"u\"}", 200);
        assertThat(list.at("/object").asString()).isEqualTo("list");
        assertThat(list.at("/model").asString()).isEqualTo("counter");
        assertThat(list.at("/data").size()).isEqualTo(2);
        for (int i = 0; i < 2; i++) {
            assertThat(list.at("/data/" + i + "/object").asString()).isEqualTo("embedding");
            assertThat(list.at("/data/" + i + "/index").asInt()).isEqualTo(i);
            assertThat(list.at("/data/" + i + "/embedding/0").floatValue()).isEqualTo(0.6f);
            assertThat(list.at("/data/" + i + "/embedding/1").floatValue()).isEqualTo(0.8f);
        }
        assertThat(list.at("/usage/prompt_tokens").asInt()).isEqualTo(8);
        assertThat(list.at("/usage/total_tokens").asInt()).isEqualTo(8);

        playNext("embd-", 1, List.of(Out.embedding(1f, 0f), Out.numTokens(2)));
        JsonNode base64 = postJson("/v1/embeddings", "{\"model\":\"counter\",\"input\":\"one\","
                + "\"encoding_format\":\"base64\"}", 200);
        byte[] floats = java.util.Base64.getDecoder().decode(base64.at("/data/0/embedding").asString());
        ByteBuffer b = ByteBuffer.wrap(floats).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(floats).hasSize(8);
        assertThat(b.getFloat()).isEqualTo(1f);
        assertThat(b.getFloat()).isEqualTo(0f);
    }

    @Test
    void oneFailingEmbeddingInputFailsTheCallWithItsErrorAndAbortsTheOthers() {
        List<String> ids = new ArrayList<>();
        Thread failer = new Thread(() -> {
            for (int i = 0; i < 3; i++) {
                ids.add(awaitRunning("embd-"));
            }
            workers.deliver(W1, new FailRequests(Map.of(ids.get(1), "kernel exploded")));
        });
        failer.setDaemon(true);
        failer.start();
        JsonNode error = postJson("/v1/embeddings", "{\"model\":\"counter\",\"input\":[\"a\",\"b\",\"c\"]}", 502);
        assertThat(error.at("/error/code").asString()).isEqualTo("worker_failed");
        assertThat(error.at("/error/param").asString()).isEqualTo("input");
        assertThat(error.at("/error/message").asString()).matches("input\\[[0-2]\\]: .*kernel exploded.*");
        for (String other : List.of(ids.get(0), ids.get(2))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> "client_cancel".equals(
                    loop.askRequests(r -> r.view(other).abortReason()).block()));
        }
    }

    @Test
    void speechIsAWavWithExactSizesAndTheChunksFormat() {
        playNext("speech-", 1, List.of(Out.audio(24000, (short) 1, (short) -1), Out.audio(24000, (short) 1000)));
        var result = web.post().uri("/v1/audio/speech").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"input\":\"hello\",\"voice\":\"alloy\"}").exchange()
                .expectStatus().isOk().expectHeader().contentType("audio/wav").expectHeader().contentLength(44 + 6)
                .expectHeader().value("Mstar-Request-Id", v -> assertThat(v).startsWith("speech-"))
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertThat(WavTests.Parsed.of(Arrays.copyOf(result, 44))).isEqualTo(new WavTests.Parsed("RIFF", 42, "WAVE",
                "fmt ", 16, 1, 1, 24000, 48000, 2, 16, "data", 6));
        assertThat(Arrays.copyOfRange(result, 44, 50)).containsExactly(1, 0, -1, -1, (byte) 0xe8, 3);
    }

    @Test
    void streamedSpeechIsAWavWithMaximalSizesThenTheSamples() {
        playNext("speech-", 1, List.of(Out.audio(16000, (short) 2), Out.audio(16000, (short) 3)));
        byte[] result = web.post().uri("/v1/audio/speech").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"input\":\"hello\",\"stream\":true}").exchange()
                .expectStatus().isOk().expectHeader().contentType("audio/wav")
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertThat(WavTests.Parsed.of(Arrays.copyOf(result, 44))).isEqualTo(new WavTests.Parsed("RIFF", 0xFFFFFFFFL,
                "WAVE", "fmt ", 16, 1, 1, 16000, 32000, 2, 16, "data", 0xFFFFFFFFL));
        assertThat(Arrays.copyOfRange(result, 44, result.length)).containsExactly(2, 0, 3, 0);
    }

    @Test
    void refusalsAreOpenAiErrorsWithTheConductorsStatuses() {
        JsonNode malformed = postJson("/v1/chat/completions", "{not json", 400);
        assertThat(malformed.at("/error/type").asString()).isEqualTo("invalid_request_error");
        assertThat(malformed.at("/error/code").asString()).isEqualTo("malformed_request");
        JsonNode unknown = postJson("/v1/embeddings", "{\"model\":\"gpt-4\",\"input\":\"a\"}", 404);
        assertThat(unknown.at("/error/code").asString()).isEqualTo("model_not_found");
        assertThat(unknown.at("/error/param").asString()).isEqualTo("model");
        JsonNode n = postJson("/v1/chat/completions", "{\"model\":\"counter\",\"n\":2,\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"hi\"}]}", 400);
        assertThat(n.at("/error/param").asString()).isEqualTo("n");
        assertThat(n.at("/error/code").asString()).isEqualTo("invalid_input");
        JsonNode many = postJson("/v1/embeddings", "{\"model\":\"counter\",\"input\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"]}", 400);
        assertThat(many.at("/error/message").asString()).contains("at most 5");
        // an input over the decoded-bytes limit is named, and nothing is submitted
        JsonNode oneTooBig = postJson("/v1/embeddings", "{\"model\":\"counter\",\"input\":[\"a\",\"" + "y".repeat(300)
                + "\"]}", 413);
        assertThat(oneTooBig.at("/error/message").asString()).startsWith("input[1]: ");
        assertThat(oneTooBig.at("/error/param").asString()).isEqualTo("input");
        assertThat(loop.askRequests(RequestLifecycle::liveRequests).block()).isZero();
        JsonNode speed = postJson("/v1/audio/speech", "{\"model\":\"counter\",\"input\":\"x\",\"speed\":2}", 400);
        assertThat(speed.at("/error/param").asString()).isEqualTo("speed");
        JsonNode big = postJson("/v1/embeddings", "{\"model\":\"counter\",\"input\":\"" + "x".repeat(5000) + "\"}", 413);
        assertThat(big.at("/error/code").asString()).isEqualTo("payload_too_large");
        // 300 prompt bytes are 1200 bytes of int32 tokens: over the 1KB input limit, as for /v1/requests
        JsonNode inputs = postJson("/v1/chat/completions", "{\"model\":\"counter\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"" + "y".repeat(300) + "\"}]}", 413);
        assertThat(inputs.at("/error/code").asString()).isEqualTo("payload_too_large");
        web.post().uri("/v1/embeddings").contentType(MediaType.TEXT_PLAIN).bodyValue("a").exchange()
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error.code").isEqualTo("malformed_request");
        // /v1/requests keeps problem+json
        web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON).bodyValue("{not json").exchange()
                .expectStatus().isBadRequest().expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON);
    }

    @Test
    void anEmbeddingsCallWhoseLastInputFindsTheQueueFullAbortsTheSubmittedOnesAndIs503() {
        // 3 active + 1 queued fit; the fifth is refused in the same loop turn
        Set<String> before = new HashSet<>();
        loop.askRequests(r -> r.list(RequestState.REMOVED)).block().forEach(v -> before.add(v.requestId()));
        var response = web.post().uri("/v1/embeddings").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"input\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}").exchange()
                .expectStatus().isEqualTo(503).expectHeader().valueEquals("Retry-After", "1")
                .expectBody(byte[].class).returnResult().getResponseBody();
        JsonNode error = JSON.readTree(response);
        assertThat(error.at("/error/code").asString()).isEqualTo("queue_full");
        assertThat(error.at("/error/type").asString()).isEqualTo("server_error");
        assertThat(error.at("/error/message").asString()).startsWith("input[4]: ");
        List<RequestView> ended = new ArrayList<>(loop.askRequests(r -> r.list(RequestState.DRAINING)).block());
        ended.addAll(loop.askRequests(r -> r.list(RequestState.REMOVED)).block());
        List<RequestView> mine = ended.stream().filter(v -> v.requestId().startsWith("embd-")
                && "client_cancel".equals(v.abortReason()) && !before.contains(v.requestId())).toList();
        assertThat(mine).hasSize(4);
        assertThat(mine).filteredOn(v -> v.state() == RequestState.DRAINING).hasSize(3);
        mine.forEach(v -> played.add(v.requestId()));
        assertThat(loop.askRequests(r -> r.list(RequestState.RUNNING)).block()).isEmpty();
        assertThat(loop.askRequests(r -> r.list(RequestState.QUEUED)).block()).isEmpty();
    }

    @Test
    void aClientThatLeavesAChatStreamOrAWaitingCallAbortsItsRequest() {
        for (String body : List.of(
                "{\"model\":\"counter\",\"stream\":true,\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                "{\"model\":\"counter\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")) {
            List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
            reactor.core.Disposable client = WebClient.create("http://localhost:" + port).post()
                    .uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                    .retrieve().bodyToFlux(String.class).subscribe(received::add, e -> { });
            String id = awaitRunning("chatcmpl-");
            // one token out, so a streaming answer has begun
            workers.deliver(W1, result(id, Out.text('x'), 0));
            if (body.contains("stream")) {
                // the frames reach the client while the request still runs: each event is flushed
                await().atMost(Duration.ofSeconds(5)).until(() -> String.join("", received).contains("\"content\":\"x\""));
            } else {
                await().atMost(Duration.ofSeconds(5)).until(() -> loop.askRequests(r -> r.view(id).chunksDelivered())
                        .block() == 1);
                assertThat(received).isEmpty();
            }
            client.dispose();
            await().atMost(Duration.ofSeconds(10)).until(() -> "client_disconnect".equals(
                    loop.askRequests(r -> r.view(id).abortReason()).block()));
        }
    }

    // ---- the played workers ----

    private JsonNode postJson(String path, String body, int status) {
        byte[] bytes = web.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isEqualTo(status).expectBody(byte[].class).returnResult().getResponseBody();
        return JSON.readTree(bytes);
    }

    /** The id of a running request with this prefix that no player has taken yet. */
    private String awaitRunning(String prefix) {
        String[] found = {null};
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<RequestView> running = loop.askRequests(r -> r.list(RequestState.RUNNING)).block();
            synchronized (played) {
                for (RequestView v : running) {
                    if (v.requestId().startsWith(prefix) && !played.contains(v.requestId())) {
                        played.add(v.requestId());
                        found[0] = v.requestId();
                        return true;
                    }
                }
            }
            return false;
        });
        return found[0];
    }

    /** Plays the next request with this prefix on another thread. */
    private void playNext(String prefix, int maxTokens, List<Out> outputs) {
        Thread t = new Thread(() -> play(awaitRunning(prefix), maxTokens, outputs), "test-workers");
        t.setDaemon(true);
        t.start();
    }

    /** The counter's walks (prefill, one decode pass of all its tokens, one detok pass) with these outputs first. */
    private void play(String id, int maxTokens, List<Out> outputs) {
        for (int i = 0; i < outputs.size(); i++) {
            workers.deliver(W0, result(id, outputs.get(i), i));
        }
        workers.deliver(W0, new WorkerGraphsDone(id, List.of(wg("prefill", "embed")), true));
        workers.deliver(W1, WorkerGraphsDone.builder(id, List.of(wg("prefill", "count")), true)
                .persistSignals(Map.of("state", List.of(workers.tensor("worker-1", "int32", new byte[4])))).build());
        workers.deliver(W1, WorkerGraphsDone.builder(id, List.of(wg("decode", "step")), true)
                .newTokenCounts(Map.of("token", maxTokens))
                .persistSignals(Map.of("state", List.of(workers.tensor("worker-1", "int32", new byte[4])))).build());
        workers.deliver(W0, WorkerGraphsDone.builder(id, List.of(wg("chunk", "detok")), true).partitionName("detok")
                .partitionDone(true).build());
    }

    private ResultTensors result(String id, Out out, int iteration) {
        return new ResultTensors(id, out.modality(), GraphEdge.builder("emit_to_client", out.signal())
                .tensorInfo(List.of(workers.tensor("worker-0", out.dtype(), out.bytes())))
                .outputModality(out.modality()).build(),
                new NestedLoopIndices(List.of("decode_loop"), Map.of("decode_loop", iteration), 0), out.metadata());
    }

    private static int wg(String walk, String node) {
        return PlayedWorkers.graphId(WGS, walk, node);
    }
}
