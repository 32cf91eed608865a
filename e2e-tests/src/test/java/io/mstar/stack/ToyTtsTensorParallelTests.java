package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.model.ToyTtsDeployments;
import io.mstar.testing.Seeds;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * toy-tts with its lm split over two worker processes in lockstep, as {@code bin/mstar up --workers 3 --deployment
 * examples/toy-tts-tp2.yaml} serves it (codec on worker 0, lm on workers 1 and 2, worker 1 leading): concurrent
 * streaming requests get byte for byte the text and audio of a stack with the lm on one worker; aborts at random
 * moments leave all three workers at baseline; {@code kill -9} of the follower gives every client in flight a
 * structured error in time, and once it is back the group serves exactly again.
 */
@Tag("kafka")
class ToyTtsTensorParallelTests {

    private static final Duration SETTLE = Duration.ofSeconds(30);
    private static final long SEED = Seeds.of("ToyTtsTensorParallelTests");
    private static final String[] PROMPTS = {"Hello there", "Once upon a time", "a", "The quick brown fox"};

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(3)
            .deploymentFile("examples/toy-tts-tp2.yaml").backToBaselineAfterEach(SETTLE)
            // speculation under TP on the real stack, whatever the default (the in-process tests also cover it off)
            .serviceArgs("--mstar.worker.engine.speculation=on");

    /** One reader thread per stream: the common pool has one thread on two cores. */
    private static final Executor READERS = r -> {
        Thread thread = new Thread(r, "e2e-stream-reader");
        thread.setDaemon(true);
        thread.start();
    };

    private static ObjectNode request(String id, int i) {
        return ToyTtsTests.request(id, PROMPTS[i % PROMPTS.length], 24 + 9 * i, i % 2 == 0 ? 0.8 : 0.0, 100 + i,
                i == 3);
    }

    @Test
    void concurrentStreamingRequestsGetTheTextAndAudioOfTheLmOnOneWorker() throws Exception {
        List<CompletableFuture<ToyTtsTests.Generated>> futures = new ArrayList<>();
        for (int i = 0; i < PROMPTS.length; i++) {
            ObjectNode body = request("tp2-" + i + "-" + System.nanoTime(), i);
            futures.add(CompletableFuture.supplyAsync(() -> ToyTtsTests.generate(STACK.client(), body), READERS));
        }
        List<ToyTtsTests.Generated> tp2 = new ArrayList<>();
        for (CompletableFuture<ToyTtsTests.Generated> f : futures) {
            tp2.add(f.get(120, TimeUnit.SECONDS));
        }
        Path stateDir = ProjectLayout.discover().root().resolve("e2e-tests/target/e2e-stacks/ToyTtsTensorParallelOne");
        KafkaBroker.deleteRecursively(stateDir);
        try (LocalStack one = LocalStackExtension.testStack().stateDir(stateDir).workers(1)
                .deploymentYaml(ToyTtsDeployments.colocated(512)).readyTimeout(Duration.ofSeconds(180)).start();
                MstarClient client = new MstarClient(one)) {
            for (int i = 0; i < PROMPTS.length; i++) {
                ToyTtsTests.Generated want = ToyTtsTests.generate(client, request("one-" + i, i));
                assertThat(tp2.get(i).text()).as("text of '%s'", PROMPTS[i]).isNotEmpty().isEqualTo(want.text());
                assertThat(tp2.get(i).audio()).as("audio of '%s'", PROMPTS[i]).isEqualTo(want.audio());
                assertThat(tp2.get(i).textChunks()).as("each token once").isEqualTo(want.textChunks());
            }
            ToyTtsTests.awaitBaseline(one);
        }
    }

    @Test
    void abortsAtRandomMomentsLeaveAllThreeWorkersAtBaseline() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED);
        List<CompletableFuture<List<JsonNode>>> ends = new ArrayList<>();
        List<String> aborted = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String id = "tp2-abort-" + i + "-" + System.nanoTime();
            MstarClient.Stream stream = STACK.client().openStream(
                    ToyTtsTests.request(id, PROMPTS[i % PROMPTS.length], 400, 0.8, i, true));
            assertThat(stream.status()).isEqualTo(200);
            int readFirst = random.nextInt(1, 40);
            boolean abort = i % 2 == 0;
            if (abort) {
                aborted.add(id);
            }
            ends.add(CompletableFuture.supplyAsync(() -> {
                try (stream) {
                    for (int k = 0; k < readFirst && abort; k++) {
                        stream.next().orElseThrow(() -> new AssertionError("stream ended early"));
                    }
                    if (abort) {
                        assertThat(STACK.client().delete("/v1/requests/" + id).statusCode()).isEqualTo(202);
                    }
                    return stream.readAll();
                }
            }, READERS));
        }
        for (int i = 0; i < ends.size(); i++) {
            List<JsonNode> chunks = ends.get(i).get(120, TimeUnit.SECONDS);
            String terminal = chunks.get(chunks.size() - 1).path("type").asString();
            assertThat(terminal).as("request %d (seed %d)", i, SEED).isEqualTo(i % 2 == 0 ? "aborted" : "done");
        }
        // @AfterEach: the conductor and all three workers at baseline
    }

    @Test
    void killingTheFollowerFailsEveryRequestInFlightInTimeAndTheGroupServesAgainAfterARestart() throws Exception {
        LocalStack stack = STACK.stack();
        ToyTtsTests.Generated before = ToyTtsTests.generate(STACK.client(), request("before-kill", 1));
        List<MstarClient.Stream> streams = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            MstarClient.Stream stream = STACK.client().openStream(
                    ToyTtsTests.request("tp2-kill-" + i + "-" + System.nanoTime(), "keep talking", 4000, 0.8, i, true));
            assertThat(stream.status()).isEqualTo(200);
            assertThat(stream.next()).isPresent();
            streams.add(stream);
        }
        List<CompletableFuture<List<JsonNode>>> ends = streams.stream()
                .map(s -> CompletableFuture.supplyAsync(s::readAll, READERS)).toList();
        stack.killWorker(2);
        long killedAt = System.nanoTime();
        for (CompletableFuture<List<JsonNode>> end : ends) {
            List<JsonNode> chunks = end.get(30, TimeUnit.SECONDS);
            JsonNode last = chunks.get(chunks.size() - 1);
            assertThat(last.path("type").asString()).as("terminal chunk %s", last).isEqualTo("error");
            assertThat(last.path("error").path("error_type").asString()).as("%s", last).isNotEmpty();
        }
        double seconds = (System.nanoTime() - killedAt) / 1e9;
        assertThat(seconds).as("seconds from kill to the last error").isLessThan(20.0);
        System.out.printf("[reliability] tp2 follower kill -9 with %d requests in flight: each got an error within"
                + " %.1f s%n", streams.size(), seconds);
        streams.forEach(MstarClient.Stream::close);

        stack.restartWorker(2).awaitReady(Duration.ofSeconds(90));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                HttpProbe.status(stack.conductor().readinessUrl(), Duration.ofSeconds(2))).isEqualTo(200));
        ToyTtsTests.Generated after = ToyTtsTests.generate(STACK.client(), request("after-restart", 1));
        assertThat(after.text()).as("the same request after the restart").isEqualTo(before.text());
        assertThat(after.audio()).isEqualTo(before.audio());
        Leaks.awaitBaseline(stack, SETTLE);
    }
}
