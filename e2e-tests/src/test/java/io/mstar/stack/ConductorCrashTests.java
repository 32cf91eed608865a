package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * {@code kill -9} of the conductor under load. Request state lives in the conductor's memory, so what its clients
 * see is their connection closing without a terminal chunk (docs/reliability.md): never a hang. The workers hear
 * the restarted conductor's new incarnation and drop what the dead one drove, so nothing leaks; then the stack
 * serves again.
 */
@Tag("kafka")
class ConductorCrashTests {

    private static final int IN_FLIGHT = 8;

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    @Test
    void killedConductorEndsEveryStreamAndARestartedOneServesWhileWorkersDropTheOrphans() throws Exception {
        LocalStack stack = STACK.stack();
        try (MstarClient client = new MstarClient(stack)) {
            List<MstarClient.Stream> streams = new ArrayList<>();
            for (int i = 0; i < IN_FLIGHT; i++) {
                MstarClient.Stream stream = client.openStream(
                        MstarClient.counterRequest("crash-" + i + "-" + System.nanoTime(), List.of(i), 4000, null, true));
                assertThat(stream.status()).as("stream %s", i).isEqualTo(200);
                assertThat(stream.next()).as("first chunk of stream %s", i).isPresent();
                streams.add(stream);
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> workerActiveRequests(stack) > 0);

            stack.killConductor();
            for (MstarClient.Stream stream : streams) {
                // Ends (closed or reset) well within the worker-loss timeout, never a terminal chunk from a dead process.
                List<JsonNode> chunks = CompletableFuture.supplyAsync(() -> readUntilClosed(stream)).get(15, TimeUnit.SECONDS);
                assertThat(chunks).noneMatch(c -> c.path("type").asString().equals("done"));
            }
            assertThat(workerActiveRequests(stack)).as("orphans before any conductor returns").isPositive();

            stack.restartConductor().awaitReady(Duration.ofSeconds(90));
        }
        // The new incarnation's first heartbeat makes each worker drop its orphans.
        Leaks.awaitBaseline(stack, Duration.ofSeconds(20));
        double dropped = 0;
        for (ServiceProcess worker : stack.workers()) {
            dropped += scrape(worker).value("mstar_worker_requests_ended_total",
                    java.util.Map.of("cause", "conductor_lost")).orElse(0.0);
        }
        assertThat(dropped).as("requests dropped as orphans on the workers").isGreaterThanOrEqualTo(IN_FLIGHT);

        try (MstarClient client = new MstarClient(stack)) {
            var response = client.post("/v1/requests",
                    MstarClient.counterRequest("after-crash-" + System.nanoTime(), List.of(5, 6), 6, null, false).toString(),
                    java.util.Map.of());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            List<JsonNode> outputs = new ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            Outputs.assertMatches("after-crash", outputs, CounterOracle.of(List.of(5, 6), 6, null));
        }
        Leaks.awaitBaseline(stack, Duration.ofSeconds(20));
        System.out.printf("[reliability] conductor kill -9 with %d streams in flight: every stream ended, %.0f orphans"
                + " dropped on the workers, served again after restart, leaks found 0%n", IN_FLIGHT, dropped);
    }

    /** Every chunk until the body ends; a reset connection ends it too. */
    private static List<JsonNode> readUntilClosed(MstarClient.Stream stream) {
        List<JsonNode> chunks = new ArrayList<>();
        try {
            for (var chunk = stream.next(); chunk.isPresent(); chunk = stream.next()) {
                chunks.add(chunk.get());
            }
        } catch (java.io.UncheckedIOException reset) {
            // the connection was reset by the dying process: as good as closed
        }
        return chunks;
    }

    private static double workerActiveRequests(LocalStack stack) {
        double active = 0;
        for (ServiceProcess worker : stack.workers()) {
            active += scrape(worker).sum("mstar_worker_requests_active");
        }
        return active;
    }

    private static PrometheusScrape scrape(ServiceProcess service) {
        return new PrometheusScrape(HttpProbe.body(service.prometheusUrl(), Duration.ofSeconds(5)));
    }
}
