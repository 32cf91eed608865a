package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * {@code kill -9} of a worker mid-load: every request in flight gets a structured error in time, readiness goes
 * DOWN, then back after a restart, and the stack serves exact results again.
 */
@Tag("kafka")
class WorkerLossTests {

    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    @Test
    void killedWorkerFailsItsRequestsWithinFifteenSecondsAndARestartedOneServesAgain() throws Exception {
        LocalStack stack = STACK.stack();
        try (MstarClient client = new MstarClient(stack)) {
            // Mid-load: counter and toy-tts requests in flight, each with a part on worker 1.
            List<MstarClient.Stream> streams = new java.util.ArrayList<>();
            List<String> ids = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String id = (i % 3 == 2 ? "loss-tts-" : "loss-") + i + "-" + System.nanoTime();
                ids.add(id);
                var body = i % 3 == 2
                        ? ToyTtsTests.request(id, "Once upon a time", 2000, 0.8, i, true)
                        : MstarClient.counterRequest(id, List.of(i), 4000, null, true);
                MstarClient.Stream stream = client.openStream(body);
                assertThat(stream.status()).isEqualTo(200);
                assertThat(stream.next()).isPresent();
                streams.add(stream);
            }
            // One reader thread per stream (the common pool has one thread on two cores).
            java.util.concurrent.Executor reader = r -> {
                Thread thread = new Thread(r, "e2e-stream-reader");
                thread.setDaemon(true);
                thread.start();
            };
            List<CompletableFuture<List<JsonNode>>> ends = streams.stream()
                    .map(s -> CompletableFuture.supplyAsync(s::readAll, reader)).toList();

            stack.killWorker(1);
            long killedAt = System.nanoTime();
            for (int i = 0; i < ends.size(); i++) {
                List<JsonNode> chunks;
                try {
                    chunks = ends.get(i).get(20, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    // Say which side hung: the conductor's view of the request, and how far the client had read.
                    var view = client.get("/v1/requests/" + ids.get(i), Map.of());
                    throw new AssertionError("stream " + ids.get(i) + " did not end within 20 s of the kill; conductor says "
                            + view.statusCode() + " " + view.body() + "; client read " + streams.get(i).chunksSoFar()
                            + " chunks", e);
                }
                JsonNode last = chunks.get(chunks.size() - 1);
                assertThat(last.path("type").asString()).as("terminal chunk %s", last).isEqualTo("error");
                assertThat(last.path("error").path("error_type").asString()).isEqualTo("worker_lost");
            }
            double seconds = (System.nanoTime() - killedAt) / 1e9;
            assertThat(seconds).as("seconds from kill to the last error").isLessThan(15.0);
            System.out.printf("[reliability] worker kill -9 with %d requests in flight: each got worker_lost within"
                    + " %.1f s%n", streams.size(), seconds);
            await().atMost(Duration.ofSeconds(15))
                    .untilAsserted(() -> assertThat(HttpProbe.status(stack.conductor().readinessUrl(), HTTP_TIMEOUT)).isEqualTo(503));

            stack.restartWorker(1).awaitReady(Duration.ofSeconds(90));
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(HttpProbe.status(stack.conductor().readinessUrl(), HTTP_TIMEOUT)).isEqualTo(200));

            var response = client.post("/v1/requests",
                    MstarClient.counterRequest("after-restart-" + System.nanoTime(), List.of(2, 3), 5, null, false).toString(), Map.of());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            List<JsonNode> outputs = new java.util.ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            Outputs.assertMatches("after-restart", outputs, CounterOracle.of(List.of(2, 3), 5, null));
        }
        Leaks.awaitBaseline(stack, Duration.ofSeconds(20));
    }
}
