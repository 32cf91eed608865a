package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import io.mstar.testing.Seeds;

/**
 * The {@code counter} model end to end: a real broker, the conductor and two worker processes, the
 * model's prefill split across both. Every request's outputs are checked against {@link CounterOracle},
 * and after each test every process's live tensors are back where they started.
 */
@Tag("kafka")
class CounterRequestsTests {

    private static final Duration SETTLE = Duration.ofSeconds(20);
    /** Long enough that a test can act on the request while it loops (about 1000 decode passes). */
    private static final int LONG_MAX_TOKENS = 4000;

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2).backToBaselineAfterEach(SETTLE);

    @Test
    void fiftyConcurrentRequestsStreamingAndNotAllGetTheirExactOutputs() throws Exception {
        long seed = Seeds.of("CounterRequestsTests.fiftyConcurrent");
        Random random = new Random(seed);
        ExecutorService pool = Executors.newFixedThreadPool(50);
        try {
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                List<Integer> tokens = random.ints(1 + random.nextInt(6), 0, 50).boxed().toList();
                int maxTokens = 1 + random.nextInt(12);
                CounterOracle expected0 = CounterOracle.of(tokens, maxTokens, null);
                // Half the requests stop on a value before max_tokens: the data-dependent loop stop.
                Integer stopAt = random.nextBoolean() ? expected0.tokens().get(random.nextInt(expected0.tokens().size())) : null;
                CounterOracle expected = CounterOracle.of(tokens, maxTokens, stopAt);
                boolean stream = i % 2 == 0;
                String id = "c50-" + seed + "-" + i;
                ObjectNode body = MstarClient.counterRequest(id, tokens, maxTokens, stopAt, stream);
                all.add(CompletableFuture.runAsync(() -> {
                    List<JsonNode> outputs = stream ? streamed(body) : collected(body);
                    Outputs.assertMatches(id, outputs, expected);
                }, pool));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(3, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void adminAbortMidLoopEndsTheStreamWithAnAbortedChunk() {
        String id = "abort-admin-" + System.nanoTime();
        try (MstarClient.Stream stream = STACK.client().openStream(
                MstarClient.counterRequest(id, List.of(1, 2), LONG_MAX_TOKENS, null, true))) {
            assertThat(stream.status()).isEqualTo(200);
            awaitTokens(stream, 3);

            HttpResponse<String> abort = STACK.client().post("/admin/requests/" + id + "/abort", "",
                    MstarClient.bearer(STACK.stack().adminToken().value()));

            assertThat(abort.statusCode()).isEqualTo(202);
            List<JsonNode> rest = stream.readAll();
            assertThat(rest.get(rest.size() - 1).path("type").asString()).isEqualTo("aborted");
            assertThat(rest.stream().filter(c -> !c.path("type").asString().equals("output")).count()).isEqualTo(1);
        }
        assertThat(status(id).path("outcome").asString()).isEqualTo("aborted");
    }

    @Test
    void deleteAbortsARunningRequest() {
        String id = "abort-delete-" + System.nanoTime();
        try (MstarClient.Stream stream = STACK.client().openStream(
                MstarClient.counterRequest(id, List.of(3), LONG_MAX_TOKENS, null, true))) {
            awaitTokens(stream, 2);

            assertThat(STACK.client().delete("/v1/requests/" + id).statusCode()).isEqualTo(202);

            List<JsonNode> rest = stream.readAll();
            assertThat(rest.get(rest.size() - 1).path("type").asString()).isEqualTo("aborted");
        }
        assertThat(status(id).path("outcome").asString()).isEqualTo("aborted");
        // Aborting is idempotent.
        assertThat(STACK.client().delete("/v1/requests/" + id).statusCode()).isEqualTo(202);
    }

    @Test
    void clientDisconnectAbortsTheRequest() {
        String id = "abort-disconnect-" + System.nanoTime();
        MstarClient.Stream stream = STACK.client().openStream(MstarClient.counterRequest(id, List.of(4), LONG_MAX_TOKENS, null, true));
        awaitTokens(stream, 2);

        stream.close();

        await().atMost(SETTLE).untilAsserted(() -> {
            JsonNode view = status(id);
            assertThat(view.path("outcome").asString()).isEqualTo("aborted");
            assertThat(view.path("abort_reason").asString()).isEqualTo("client_disconnect");
        });
    }

    @Test
    void anExpiredDeadlineIsAStructuredTimeout() {
        ObjectNode body = MstarClient.counterRequest("deadline-" + System.nanoTime(), List.of(5), LONG_MAX_TOKENS, null, false);
        body.put("deadline_ms", 300);

        HttpResponse<String> response = STACK.client().post("/v1/requests", body.toString(), Map.of());

        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(MstarClient.JSON.readTree(response.body()).path("error_type").asString()).isEqualTo("deadline_exceeded");
    }

    @Test
    void adminApiNeedsTheRightBearerToken() {
        assertThat(STACK.client().get("/admin/workers", Map.of()).statusCode()).isEqualTo(401);
        assertThat(STACK.client().get("/admin/workers", MstarClient.bearer("not-the-token-0123456789")).statusCode()).isEqualTo(403);

        HttpResponse<String> workers = STACK.client().get("/admin/workers", MstarClient.bearer(STACK.stack().adminToken().value()));

        assertThat(workers.statusCode()).isEqualTo(200);
        assertThat(workers.body()).contains("worker-0", "worker-1");
    }

    @Test
    void malformedAndOversizedBodiesAreProblems() {
        HttpResponse<String> malformed = STACK.client().post("/v1/requests", "{\"model\": \"counter\", \"inputs\": ", Map.of());
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(malformed.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/problem+json"));

        byte[] huge = new byte[9 * 1024 * 1024];
        java.util.Arrays.fill(huge, (byte) ' ');
        HttpResponse<String> oversized = STACK.client().postBytes("/v1/requests", huge);
        assertThat(oversized.statusCode()).isEqualTo(413);

        HttpResponse<String> unknownModel = STACK.client().post("/v1/requests",
                MstarClient.counterRequest(null, List.of(1), 1, null, false).put("model", "nope").toString(), Map.of());
        assertThat(unknownModel.statusCode()).isEqualTo(404);
    }

    private static List<JsonNode> streamed(ObjectNode body) {
        try (MstarClient.Stream stream = STACK.client().openStream(body)) {
            assertThat(stream.status()).as("%s", body.path("request_id")).isEqualTo(200);
            List<JsonNode> chunks = stream.readAll();
            JsonNode last = chunks.get(chunks.size() - 1);
            assertThat(last.path("type").asString()).as("terminal chunk of %s: %s", body.path("request_id"), last)
                    .isEqualTo("done");
            return chunks.subList(0, chunks.size() - 1);
        }
    }

    private static List<JsonNode> collected(ObjectNode body) {
        HttpResponse<String> response = STACK.client().post("/v1/requests", body.toString(), Map.of());
        assertThat(response.statusCode()).as("%s: %s", body.path("request_id"), response.body()).isEqualTo(200);
        JsonNode answer = MstarClient.JSON.readTree(response.body());
        assertThat(answer.path("status").asString()).isEqualTo("done");
        List<JsonNode> outputs = new ArrayList<>();
        answer.path("outputs").forEach(outputs::add);
        return outputs;
    }

    private static void awaitTokens(MstarClient.Stream stream, int tokens) {
        int seen = 0;
        while (seen < tokens) {
            JsonNode chunk = stream.next().orElseThrow(() -> new AssertionError("stream ended before " + tokens + " tokens"));
            assertThat(chunk.path("type").asString()).as("chunk %s", chunk).isEqualTo("output");
            if (chunk.path("name").asString().equals("token")) {
                seen++;
            }
        }
    }

    private static JsonNode status(String id) {
        HttpResponse<String> response = STACK.client().get("/v1/requests/" + id, Map.of());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return MstarClient.JSON.readTree(response.body());
    }
}
