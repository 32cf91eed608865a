package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import io.mstar.model.ToyTtsModel;
import io.mstar.testing.Seeds;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
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
import tools.jackson.databind.node.ObjectNode;

/**
 * The soak, across the models of the built-in deployment: hundreds of requests, a third or more aborted or
 * abandoned at random moments — while still queued (admission is small on purpose), right after submission (inputs
 * and first transfers in flight), mid-loop, and by the client disconnecting mid-stream. Every completed request is
 * checked: the counter exactly against its oracle, a toy-tts request byte for byte and a minilm-embed sentence within
 * float rounding against the same request run alone before the soak (so batching with strangers changes nothing). Afterwards no request is left non-terminal and
 * every process is back at baseline ({@link Leaks}); a real Prometheus scrapes every service throughout. Seeded: the seed is printed, {@code -Dmstar.test.seed} replays it.
 */
@Tag("kafka")
class SoakTests {

    /** 320 by default (a few minutes on two cores); {@code -Dmstar.soak.requests=N} runs a longer soak. */
    private static final int REQUESTS = Integer.getInteger("mstar.soak.requests", 320);
    private static final int CLIENTS = 48;
    private static final List<String> PROMPTS = List.of("Once upon a time", "hello", "The weather today is",
            "a", "Speak slowly, please.", "1234");

    /** What a client does with its request. */
    enum Fate {
        COMPLETE, ABORT_AT_ONCE, ABORT_AFTER_DELAY, DELETE_MID_LOOP, DISCONNECT_MID_STREAM
    }

    /** One request of some model: its body, and how a completed one's outputs are checked. */
    interface Job {
        ObjectNode body(String id, boolean stream);

        void verify(String id, List<JsonNode> outputs);
    }

    record CounterJob(List<Integer> input, int maxTokens, Integer stopAt) implements Job {
        public ObjectNode body(String id, boolean stream) {
            return MstarClient.counterRequest(id, input, maxTokens, stopAt, stream);
        }

        public void verify(String id, List<JsonNode> outputs) {
            Outputs.assertMatches(id, outputs, CounterOracle.of(input, maxTokens, stopAt));
        }
    }

    /** Text and audio bytes of a toy-tts request, in delivery order. */
    record Speech(byte[] text, byte[] audio) {
        static Speech of(List<JsonNode> outputs) {
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            ByteArrayOutputStream audio = new ByteArrayOutputStream();
            for (JsonNode chunk : outputs) {
                if (chunk.path("name").asString().equals(ToyTtsModel.TEXT)) {
                    chunk.path("data").forEach(b -> text.write(b.asInt()));
                } else {
                    audio.writeBytes(Base64.getDecoder().decode(chunk.path("data").asString()));
                }
            }
            return new Speech(text.toByteArray(), audio.toByteArray());
        }
    }

    /** What a toy-tts request asks for; the same spec and seed must always give the same speech. */
    record SpeechSpec(String prompt, int maxTokens, double temperature, long seed, boolean ignoreEos) {
    }

    /** {@code references} holds what each spec produced alone; an abandoned job has none and is never verified. */
    record ToyTtsJob(SpeechSpec spec, Map<SpeechSpec, Speech> references) implements Job {
        public ObjectNode body(String id, boolean stream) {
            ObjectNode body = ToyTtsTests.request(id, spec.prompt(), spec.maxTokens(), spec.temperature(), spec.seed(),
                    spec.ignoreEos());
            body.put("stream", stream);
            return body;
        }

        public void verify(String id, List<JsonNode> outputs) {
            Speech got = Speech.of(outputs);
            Speech expected = references.get(spec);
            assertThat(got.text()).as("%s text", id).isEqualTo(expected.text());
            assertThat(got.audio()).as("%s audio", id).isEqualTo(expected.audio());
        }
    }

    record MiniLmJob(String sentence, Map<String, double[]> references) implements Job {
        public ObjectNode body(String id, boolean stream) {
            ObjectNode body = MstarClient.JSON.createObjectNode();
            body.put("model", "minilm-embed");
            body.put("request_id", id);
            body.putObject("inputs").putObject("text").put("text", sentence);
            body.put("stream", stream);
            return body;
        }

        public void verify(String id, List<JsonNode> outputs) {
            double[] got = embedding(outputs);
            double[] expected = references.get(sentence);
            assertThat(got).as("%s embedding of '%s'", id, sentence).hasSameSizeAs(expected);
            // Batched with other sentences, padded and masked: the same vector up to float rounding.
            for (int i = 0; i < got.length; i++) {
                assertThat(got[i]).as("%s embedding[%d]", id, i).isCloseTo(expected[i],
                        org.assertj.core.data.Offset.offset(1e-5));
            }
        }

        static double[] embedding(List<JsonNode> outputs) {
            for (JsonNode chunk : outputs) {
                if (chunk.path("name").asString().equals("embedding")) {
                    double[] v = new double[chunk.path("data").size()];
                    for (int i = 0; i < v.length; i++) {
                        v[i] = chunk.path("data").get(i).asDouble();
                    }
                    return v;
                }
            }
            throw new AssertionError("no embedding in " + outputs);
        }
    }

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2).admission(12, 512);

    @Test
    void aThirdAbortedAtRandomMomentsLeavesNothingBehindAndEveryCompletedRequestIsExact() throws Exception {
        long seed = Seeds.of("SoakTests");
        Random plan = new Random(seed);
        LocalStack stack = STACK.stack();
        String token = stack.adminToken().value();
        Map<Fate, AtomicInteger> fates = new EnumMap<>(Fate.class);
        for (Fate fate : Fate.values()) {
            fates.put(fate, new AtomicInteger());
        }
        Map<String, Integer> models = new ConcurrentHashMap<>();
        Map<String, Fate> planned = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try (MstarClient client = new MstarClient(stack);
                PrometheusServer prometheus = PrometheusServer.scraping(stack)) {
            List<ToyTtsJob> speeches = referenceSpeeches(client, plan);
            List<MiniLmJob> sentences = referenceEmbeddings(client);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                String id = "soak-" + seed + "-" + i;
                Fate fate = pick(plan);
                Job job = job(plan, fate, speeches, sentences);
                models.merge(job.getClass().getSimpleName(), 1, Integer::sum);
                int chunksBefore = 1 + plan.nextInt(4);
                long delayMicros = plan.nextInt(30_000);
                boolean stream = fate != Fate.COMPLETE || plan.nextBoolean();
                planned.put(id, fate);
                fates.get(fate).incrementAndGet();
                all.add(CompletableFuture.runAsync(() -> run(client, token, id, fate, job, chunksBefore, delayMicros,
                        stream), pool));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);

            int abandoned = REQUESTS - fates.get(Fate.COMPLETE).get();
            System.out.println("[soak] fates " + fates + ", jobs " + models);
            assertThat(abandoned).as("requests aborted or abandoned").isGreaterThanOrEqualTo(REQUESTS * 3 / 10);
            assertThat(models).as("every model of the deployment").hasSize(3);

            // No request is left non-terminal: each ended (completed or aborted) and was removed.
            Leaks.awaitBaseline(stack, Duration.ofSeconds(60));
            for (String id : planned.keySet()) {
                HttpResponse<String> view = client.get("/v1/requests/" + id, Map.of());
                assertThat(view.statusCode()).as("%s: %s", id, view.body()).isEqualTo(200);
                JsonNode body = MstarClient.JSON.readTree(view.body());
                assertThat(body.path("state").asString()).as("%s state", id).isEqualTo("removed");
                assertThat(body.path("outcome").asString()).as("%s outcome", id).isIn("completed", "aborted");
            }
            // Prometheus scraped every service throughout and saw the load.
            prometheus.awaitAllUp(1 + stack.workers().size());
            assertThat(prometheus.query("sum(mstar_conductor_requests_total)").get(0).path("value").get(1).asDouble())
                    .as("requests Prometheus counted").isGreaterThanOrEqualTo(REQUESTS);
            assertThat(prometheus.query("max_over_time(mstar_conductor_requests_in_flight[15m])").get(0)
                    .path("value").get(1).asDouble()).as("requests in flight at the peak, as scraped").isPositive();
            System.out.printf("[reliability] soak: %d requests (%s), %d aborted or abandoned (%s), non-terminal 0,"
                    + " leaks found 0%n", REQUESTS, models, abandoned, fates);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A few toy-tts requests run one at a time before the soak: what each must produce under any load. */
    private static List<ToyTtsJob> referenceSpeeches(MstarClient client, Random plan) {
        Map<SpeechSpec, Speech> references = new ConcurrentHashMap<>();
        List<ToyTtsJob> jobs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ToyTtsJob job = new ToyTtsJob(new SpeechSpec(PROMPTS.get(i), 8 + plan.nextInt(40), i % 3 == 0 ? 0.0 : 0.9,
                    plan.nextInt(1000), i % 2 == 0), references);
            HttpResponse<String> response = client.post("/v1/requests", job.body("soak-reference-" + i + "-"
                    + System.nanoTime(), false).toString(), Map.of());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            List<JsonNode> outputs = new ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            references.put(job.spec(), Speech.of(outputs));
            jobs.add(job);
        }
        return jobs;
    }

    /** A few sentences embedded one at a time before the soak. */
    private static List<MiniLmJob> referenceEmbeddings(MstarClient client) {
        Map<String, double[]> references = new ConcurrentHashMap<>();
        List<MiniLmJob> jobs = new ArrayList<>();
        for (String sentence : List.of("a cat sits on the mat", "stock markets fell",
                "The quick brown fox jumps over the lazy dog near the riverbank.", "hi")) {
            MiniLmJob job = new MiniLmJob(sentence, references);
            HttpResponse<String> response = client.post("/v1/requests",
                    job.body("soak-reference-" + System.nanoTime(), false).toString(), Map.of());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            List<JsonNode> outputs = new ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            references.put(sentence, MiniLmJob.embedding(outputs));
            jobs.add(job);
        }
        return jobs;
    }

    private static Job job(Random plan, Fate fate, List<ToyTtsJob> speeches, List<MiniLmJob> sentences) {
        boolean longRunning = fate != Fate.COMPLETE;
        int model = plan.nextInt(4);
        if (model == 1) {
            return sentences.get(plan.nextInt(sentences.size()));
        }
        if (model == 0) {
            ToyTtsJob reference = speeches.get(plan.nextInt(speeches.size()));
            // An abandoned one generates long enough to be caught mid-loop.
            return longRunning ? new ToyTtsJob(new SpeechSpec(reference.spec().prompt(), 300, 0.9, plan.nextInt(1000),
                    true), Map.of()) : reference;
        }
        List<Integer> input = List.of(plan.nextInt(50), plan.nextInt(50));
        int maxTokens = longRunning ? 200 + plan.nextInt(400) : 1 + plan.nextInt(12);
        Integer stopAt = !longRunning && plan.nextBoolean() ? input.get(0) + 1 + plan.nextInt(8) : null;
        return new CounterJob(input, maxTokens, stopAt);
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

    private static void run(MstarClient client, String token, String id, Fate fate, Job job, int chunksBefore,
            long delayMicros, boolean stream) {
        ObjectNode body = job.body(id, stream);
        if (fate == Fate.COMPLETE && !stream) {
            HttpResponse<String> response = client.post("/v1/requests", body.toString(), Map.of());
            assertThat(response.statusCode()).as("%s: %s", id, response.body()).isEqualTo(200);
            List<JsonNode> outputs = new ArrayList<>();
            MstarClient.JSON.readTree(response.body()).path("outputs").forEach(outputs::add);
            job.verify(id, outputs);
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
            assertTerminal(id, ended.join(), "aborted", "done");
            return;
        }
        try (MstarClient.Stream s = client.openStream(body)) {
            assertThat(s.status()).as(id).isEqualTo(200);
            if (fate == Fate.COMPLETE) {
                List<JsonNode> chunks = s.readAll();
                assertTerminal(id, chunks, "done");
                job.verify(id, chunks.subList(0, chunks.size() - 1));
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
