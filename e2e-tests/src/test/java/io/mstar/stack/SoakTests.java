package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * The soak: hundreds of requests, a third or more aborted or abandoned at random moments — while still queued
 * (admission is small on purpose), right after submission (inputs and first transfers in flight), mid-loop, and by
 * the client disconnecting mid-stream. Every completed one is checked exactly against the oracle; afterwards no
 * request is left non-terminal and every process is back at zero live tensors, device bytes and active requests.
 * Seeded: the seed is printed and {@code -Dmstar.soak.seed} replays the same plan.
 */
@Tag("kafka")
class SoakTests {

    private static final int REQUESTS = 320;
    private static final int CLIENTS = 48;

    /** What a client does with its request. */
    enum Fate {
        COMPLETE, ABORT_AT_ONCE, ABORT_AFTER_DELAY, DELETE_MID_LOOP, DISCONNECT_MID_STREAM
    }

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2).admission(12, 512);

    @Test
    void aThirdAbortedAtRandomMomentsLeavesNothingBehindAndEveryCompletedRequestIsExact() throws Exception {
        long seed = Long.getLong("mstar.soak.seed", System.nanoTime());
        System.out.println("[seed] SoakTests runs with -Dmstar.soak.seed=" + seed);
        Random plan = new Random(seed);
        LocalStack stack = STACK.stack();
        String token = stack.adminToken().value();
        Map<Fate, AtomicInteger> fates = new EnumMap<>(Fate.class);
        for (Fate fate : Fate.values()) {
            fates.put(fate, new AtomicInteger());
        }
        Map<String, Fate> planned = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try (MstarClient client = new MstarClient(stack.conductor().baseUrl())) {
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                String id = "soak-" + seed + "-" + i;
                Fate fate = pick(plan);
                List<Integer> input = List.of(plan.nextInt(50), plan.nextInt(50));
                int maxTokens = fate == Fate.COMPLETE ? 1 + plan.nextInt(12) : 200 + plan.nextInt(400);
                Integer stopAt = fate == Fate.COMPLETE && plan.nextBoolean() ? input.get(0) + 1 + plan.nextInt(8) : null;
                int chunksBefore = 1 + plan.nextInt(4);
                long delayMicros = plan.nextInt(30_000);
                boolean stream = fate != Fate.COMPLETE || plan.nextBoolean();
                planned.put(id, fate);
                fates.get(fate).incrementAndGet();
                all.add(CompletableFuture.runAsync(() -> run(client, token, id, fate, input, maxTokens, stopAt,
                        chunksBefore, delayMicros, stream), pool));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(8, TimeUnit.MINUTES);

            int abandoned = REQUESTS - fates.get(Fate.COMPLETE).get();
            System.out.println("[soak] fates " + fates);
            assertThat(abandoned).as("requests aborted or abandoned").isGreaterThanOrEqualTo(REQUESTS * 3 / 10);

            // No request is left non-terminal: each ended (done, aborted or failed) and was removed.
            Leaks.awaitBaseline(stack, Duration.ofSeconds(60));
            for (String id : planned.keySet()) {
                HttpResponse<String> view = client.get("/v1/requests/" + id, Map.of());
                assertThat(view.statusCode()).as("%s: %s", id, view.body()).isEqualTo(200);
                JsonNode body = MstarClient.JSON.readTree(view.body());
                assertThat(body.path("state").asString()).as("%s state", id).isEqualTo("removed");
                assertThat(body.path("outcome").asString()).as("%s outcome", id).isIn("completed", "aborted");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static Fate pick(Random plan) {
        int roll = plan.nextInt(100);
        if (roll < 55) {
            return Fate.COMPLETE;
        }
        if (roll < 65) {
            return Fate.ABORT_AT_ONCE;
        }
        if (roll < 75) {
            return Fate.ABORT_AFTER_DELAY;
        }
        if (roll < 88) {
            return Fate.DELETE_MID_LOOP;
        }
        return Fate.DISCONNECT_MID_STREAM;
    }

    private static void run(MstarClient client, String token, String id, Fate fate, List<Integer> input, int maxTokens,
            Integer stopAt, int chunksBefore, long delayMicros, boolean stream) {
        var body = MstarClient.counterRequest(id, input, maxTokens, stopAt, stream);
        if (fate == Fate.COMPLETE && !stream) {
            HttpResponse<String> response = client.post("/v1/requests", body.toString(), Map.of());
            assertThat(response.statusCode()).as("%s: %s", id, response.body()).isEqualTo(200);
            List<JsonNode> outputs = new ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            Outputs.assertMatches(id, outputs, CounterOracle.of(input, maxTokens, stopAt));
            return;
        }
        if (fate == Fate.ABORT_AT_ONCE || fate == Fate.ABORT_AFTER_DELAY) {
            // Submitted on another thread so the abort can land while it is queued or its inputs are in flight.
            CompletableFuture<List<JsonNode>> ended = CompletableFuture.supplyAsync(() -> {
                try (MstarClient.Stream s = client.openStream(body)) {
                    return s.readAll();
                }
            });
            if (fate == Fate.ABORT_AFTER_DELAY) {
                Pause.of(Duration.ofNanos(delayMicros * 1000));
            }
            abortUntilKnown(client, token, id);
            List<JsonNode> chunks = ended.join();
            assertTerminal(id, chunks, "aborted", "done");
            return;
        }
        try (MstarClient.Stream s = client.openStream(body)) {
            assertThat(s.status()).as(id).isEqualTo(200);
            if (fate == Fate.COMPLETE) {
                List<JsonNode> chunks = s.readAll();
                assertTerminal(id, chunks, "done");
                Outputs.assertMatches(id, chunks.subList(0, chunks.size() - 1), CounterOracle.of(input, maxTokens, stopAt));
                return;
            }
            for (int read = 0; read < chunksBefore && s.next().isPresent(); read++) {
                // let it run a few chunks into the loop
            }
            if (fate == Fate.DELETE_MID_LOOP) {
                assertThat(client.delete("/v1/requests/" + id).statusCode()).as(id).isEqualTo(202);
                assertTerminal(id, s.readAll(), "aborted", "done");
            }
            // DISCONNECT_MID_STREAM: closing the stream here is the disconnect.
        }
    }

    /** Admin abort; the submission may not have reached the conductor yet, so a 404 is retried briefly. */
    private static void abortUntilKnown(MstarClient client, String token, String id) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            int status = client.post("/admin/requests/" + id + "/abort", "", MstarClient.bearer(token)).statusCode();
            if (status == 202 || System.nanoTime() > deadline) {
                assertThat(status).as("abort of %s", id).isEqualTo(202);
                return;
            }
            assertThat(status).as("abort of %s", id).isEqualTo(404);
            Pause.of(Duration.ofMillis(2));
        }
    }

    private static void assertTerminal(String id, List<JsonNode> chunks, String... allowed) {
        assertThat(chunks).as("%s chunks", id).isNotEmpty();
        JsonNode last = chunks.get(chunks.size() - 1);
        assertThat(last.path("type").asString()).as("%s terminal chunk %s", id, last).isIn((Object[]) allowed);
        assertThat(chunks.subList(0, chunks.size() - 1)).as("%s: one terminal chunk, last", id)
                .allMatch(c -> c.path("type").asString().equals("output"));
    }
}
