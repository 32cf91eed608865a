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

/** {@code kill -9} of a worker mid-request: a structured error in time, readiness DOWN, then back after a restart. */
@Tag("kafka")
class WorkerLossTests {

    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    @Test
    void killedWorkerFailsItsRequestsWithinFifteenSecondsAndARestartedOneServesAgain() throws Exception {
        LocalStack stack = STACK.stack();
        try (MstarClient client = new MstarClient(stack.conductor().baseUrl())) {
            MstarClient.Stream stream = client.openStream(
                    MstarClient.counterRequest("loss-" + System.nanoTime(), List.of(1), 4000, null, true));
            assertThat(stream.next()).isPresent();

            stack.killWorker(1);
            long killedAt = System.nanoTime();
            List<JsonNode> chunks = CompletableFuture.supplyAsync(stream::readAll).get(20, TimeUnit.SECONDS);
            double seconds = (System.nanoTime() - killedAt) / 1e9;

            JsonNode last = chunks.get(chunks.size() - 1);
            assertThat(last.path("type").asString()).as("terminal chunk %s", last).isEqualTo("error");
            assertThat(last.path("error").path("error_type").asString()).isEqualTo("worker_lost");
            assertThat(seconds).as("seconds from kill to the error").isLessThan(15.0);
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
