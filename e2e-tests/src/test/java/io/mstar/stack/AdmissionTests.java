package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/** One request running, one queued, the next refused at once with 503 and Retry-After. */
@Tag("kafka")
class AdmissionTests {

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2).admission(1, 1);

    @Test
    void aFullQueueAnswers503WithRetryAfterAndAQueuedRequestIsDroppedWithoutWorkers() throws Exception {
        LocalStack stack = STACK.stack();
        try (MstarClient client = new MstarClient(stack);
             MstarClient.Stream running = client.openStream(MstarClient.counterRequest("adm-running", List.of(1), 4000, null, true))) {
            assertThat(running.next()).isPresent();
            // A stream's headers come with its first chunk, which a queued request has not made yet.
            CompletableFuture<MstarClient.Stream> queuedStream = CompletableFuture.supplyAsync(
                    () -> client.openStream(MstarClient.counterRequest("adm-queued", List.of(2), 3, null, true)));
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(status(client, "adm-queued").path("state").asString()).isEqualTo("queued"));

            HttpResponse<String> refused = client.post("/v1/requests",
                    MstarClient.counterRequest("adm-refused", List.of(3), 3, null, false).toString(), Map.of());

            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            assertThat(MstarClient.JSON.readTree(refused.body()).path("error_type").asString()).isEqualTo("queue_full");

            String token = stack.adminToken().value();
            assertThat(client.post("/admin/requests/adm-queued/abort", "", MstarClient.bearer(token)).statusCode()).isEqualTo(202);
            List<JsonNode> queuedChunks = queuedStream.get(10, TimeUnit.SECONDS).readAll();
            assertThat(queuedChunks).extracting(c -> c.path("type").asString()).containsExactly("aborted");

            assertThat(client.post("/admin/requests/abort-all", "", MstarClient.bearer(token)).statusCode()).isEqualTo(202);
            List<JsonNode> runningChunks = running.readAll();
            assertThat(runningChunks.get(runningChunks.size() - 1).path("type").asString()).isEqualTo("aborted");
        }
        Leaks.awaitBaseline(stack, Duration.ofSeconds(20));
    }

    private static JsonNode status(MstarClient client, String id) {
        return MstarClient.JSON.readTree(client.get("/v1/requests/" + id, Map.of()).body());
    }
}
