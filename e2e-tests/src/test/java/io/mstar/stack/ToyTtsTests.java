package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.model.ToyTtsDeployments;
import io.mstar.model.ToyTtsModel;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code toy-tts} end to end through a real broker, the conductor and two worker processes with the model
 * disaggregated (lm on worker 1, codec on worker 0), and once against a second stack with the model colocated on one
 * worker: the same request and seed give byte-identical text and audio; audio chunks carry their sample rate and
 * channels and follow the codec's window policy; EOS and max_tokens end generation; an audio-only request gets no
 * text; aborting mid-generation leaves every process at baseline (no tensor, no KV page in use, no device byte
 * beyond the KV pool).
 */
@Tag("kafka")
class ToyTtsTests {

    private static final Duration SETTLE = Duration.ofSeconds(30);
    static final String DISAGGREGATED = ToyTtsDeployments.disaggregated(512);
    static final String COLOCATED = ToyTtsDeployments.colocated(512);

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2).deployment(DISAGGREGATED)
            .backToBaselineAfterEach(SETTLE);

    record Generated(byte[] text, byte[] audio, int audioChunks, int textChunks) {
    }

    static ObjectNode request(String id, String prompt, int maxTokens, double temperature, long seed, boolean ignoreEos) {
        ObjectNode body = MstarClient.JSON.createObjectNode();
        body.put("model", ToyTtsModel.NAME);
        body.put("request_id", id);
        body.putObject("inputs").putObject("text").put("text", prompt);
        body.put("max_tokens", maxTokens);
        ObjectNode sampling = body.putObject("sampling");
        sampling.put("temperature", temperature);
        sampling.put("top_k", 40);
        sampling.put("top_p", 0.95);
        sampling.put("ignore_eos", ignoreEos);
        body.put("seed", seed);
        body.put("stream", true);
        return body;
    }

    static Generated generate(MstarClient c, ObjectNode body) {
        try (MstarClient.Stream stream = c.openStream(body)) {
            assertThat(stream.status()).isEqualTo(200);
            List<JsonNode> chunks = stream.readAll();
            JsonNode last = chunks.get(chunks.size() - 1);
            assertThat(last.path("type").asString()).as("terminal of %s: %s", body.path("request_id"), last)
                    .isEqualTo("done");
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            ByteArrayOutputStream audio = new ByteArrayOutputStream();
            int audioChunks = 0;
            int textChunks = 0;
            for (JsonNode chunk : chunks.subList(0, chunks.size() - 1)) {
                assertThat(chunk.path("type").asString()).isEqualTo("output");
                JsonNode meta = chunk.path("metadata");
                if (chunk.path("name").asString().equals(ToyTtsModel.TEXT)) {
                    assertThat(chunk.path("modality").asString()).isEqualTo("text");
                    assertThat(meta.path("dtype").asString()).isEqualTo("int32");
                    JsonNode data = chunk.path("data");
                    assertThat(data.size()).isEqualTo(1);
                    int b = data.get(0).asInt();
                    assertThat(b).as("a byte, never a special id").isBetween(0, 255);
                    text.write(b);
                    textChunks++;
                } else {
                    assertThat(chunk.path("name").asString()).isEqualTo(ToyTtsModel.AUDIO);
                    assertThat(chunk.path("modality").asString()).isEqualTo("audio");
                    assertThat(meta.path("dtype").asString()).isEqualTo("int16");
                    assertThat(meta.path("sample_rate").asInt()).isEqualTo(16000);
                    assertThat(meta.path("channels").asInt()).isEqualTo(1);
                    audio.writeBytes(Base64.getDecoder().decode(chunk.path("data").asString()));
                    audioChunks++;
                }
            }
            return new Generated(text.toByteArray(), audio.toByteArray(), audioChunks, textChunks);
        }
    }

    @Test
    void sameRequestAndSeedGiveIdenticalTextAndAudioAcrossRunsAndAColocatedStack() throws Exception {
        String[] prompts = {"Hello there", "ünïcödé ✓", "The quick brown fox"};
        List<Generated> first = new ArrayList<>();
        for (int i = 0; i < prompts.length; i++) {
            first.add(generate(STACK.client(), request("same-a-" + i, prompts[i], 48, 0.8, 1000 + i, false)));
        }
        for (int i = 0; i < prompts.length; i++) {
            Generated again = generate(STACK.client(), request("same-b-" + i, prompts[i], 48, 0.8, 1000 + i, false));
            assertThat(again.text()).isEqualTo(first.get(i).text());
            assertThat(again.audio()).isEqualTo(first.get(i).audio());
        }
        for (Generated g : first) {
            assertThat(g.text()).isNotEmpty();
            assertThat(g.textChunks()).isEqualTo(g.text().length);
            assertThat(g.audioChunks()).isEqualTo(ToyTtsModel.audioChunks(g.text().length));
            assertThat(g.audio()).hasSize(g.text().length * ToyTtsModel.SAMPLES_PER_TOKEN * 2);
        }
        assertThat(generate(STACK.client(), request("same-other-seed", prompts[0], 48, 0.8, 7777, false)).text())
                .isNotEqualTo(first.get(0).text());

        Path stateDir = ProjectLayout.discover().root().resolve("e2e-tests/target/e2e-stacks/ToyTtsTestsColocated");
        KafkaBroker.deleteRecursively(stateDir);
        try (LocalStack colocated = LocalStackExtension.testStack().stateDir(stateDir).workers(1).deploymentYaml(COLOCATED)
                .readyTimeout(Duration.ofSeconds(180)).start();
                MstarClient other = new MstarClient(colocated)) {
            for (int i = 0; i < prompts.length; i++) {
                Generated g = generate(other, request("colocated-" + i, prompts[i], 48, 0.8, 1000 + i, false));
                assertThat(g.text()).as("colocated '%s'", prompts[i]).isEqualTo(first.get(i).text());
                assertThat(g.audio()).as("colocated '%s'", prompts[i]).isEqualTo(first.get(i).audio());
                assertThat(g.audioChunks()).isEqualTo(first.get(i).audioChunks());
            }
            awaitBaseline(colocated);
        }
    }

    @Test
    void eosEndsGenerationBeforeMaxTokensAndMaxTokensOtherwise() {
        Generated eos = generate(STACK.client(), request("eos", "Once upon a time", 1000, 0.0, 1, false));
        assertThat(eos.text().length).as("greedy generation stopped by EOS").isBetween(1, 999);
        Generated capped = generate(STACK.client(), request("max", "Once upon a time", 7, 0.0, 1, false));
        assertThat(capped.text()).hasSize(7).isEqualTo(java.util.Arrays.copyOf(eos.text(), 7));
        assertThat(capped.audioChunks()).isEqualTo(ToyTtsModel.audioChunks(7));
        Generated noEos = generate(STACK.client(), request("no-eos", "hi", 37, 0.8, 2, true));
        assertThat(noEos.text()).hasSize(37);
        assertThat(noEos.audioChunks()).isEqualTo(ToyTtsModel.audioChunks(37));
    }

    @Test
    void anAudioOnlyRequestGetsNoTextChunks() {
        ObjectNode body = request("audio-only", "speak", 20, 0.8, 3, true);
        body.putArray("outputs").add("audio");
        Generated g = generate(STACK.client(), body);
        assertThat(g.textChunks()).isZero();
        assertThat(g.audioChunks()).isEqualTo(ToyTtsModel.audioChunks(20));
        assertThat(g.audio()).hasSize(20 * ToyTtsModel.SAMPLES_PER_TOKEN * 2);
    }

    @Test
    void abortingMidGenerationLeavesBothWorkersAtBaseline() {
        String id = "tts-abort-" + System.nanoTime();
        try (MstarClient.Stream stream = STACK.client().openStream(request(id, "abort me", 4000, 0.8, 5, true))) {
            assertThat(stream.status()).isEqualTo(200);
            int text = 0;
            int audio = 0;
            while (text < 30 || audio < 2) {
                JsonNode chunk = stream.next().orElseThrow(() -> new AssertionError("stream ended early"));
                assertThat(chunk.path("type").asString()).isEqualTo("output");
                if (chunk.path("name").asString().equals("text")) {
                    text++;
                } else {
                    audio++;
                }
            }
            assertThat(STACK.client().delete("/v1/requests/" + id).statusCode()).isEqualTo(202);
            List<JsonNode> rest = stream.readAll();
            assertThat(rest.get(rest.size() - 1).path("type").asString()).isEqualTo("aborted");
        }
        // @AfterEach: both workers and the conductor at baseline
    }

    /**
     * What a stalled stream leaves for its reader ({@link StackDiagnostics}), taken here of a request that runs: the
     * conductor lists it, the lm's worker describes its decode pass and the codec's worker its stream, and every
     * service's threads are dumped.
     */
    @Test
    void theStacksDiagnosticsShowWhereARunningRequestStands() throws Exception {
        String id = "tts-described-" + System.nanoTime();
        try (MstarClient.Stream stream = STACK.client().openStream(request(id, "describe me", 4000, 0.8, 9, true))) {
            assertThat(stream.status()).isEqualTo(200);
            for (int i = 0; i < 40; i++) {
                stream.next().orElseThrow(() -> new AssertionError("stream ended early"));
            }
            Path dir = StackDiagnostics.capture(STACK.stack(), id);
            JsonNode conductor = MstarClient.JSON.readTree(Files.readString(dir.resolve("conductor-requests.json")));
            assertThat(conductor.path("requests").valueStream().map(r -> r.path("request_id").asString())).contains(id);
            // disaggregated: the lm on worker 1, the codec on worker 0
            JsonNode lm = only(Files.readString(dir.resolve("worker-1-engine.json")), id);
            assertThat(lm.path("partitions").get(0).path("name").asString()).isEqualTo("lm");
            assertThat(lm.path("partitions").get(0).path("walk").asString()).isEqualTo("decode");
            JsonNode codec = only(Files.readString(dir.resolve("worker-0-engine.json")), id);
            JsonNode tokens = codec.path("partitions").get(0).path("streams").get(0);
            assertThat(tokens.path("registered").asLong()).as("tokens streamed to the codec %s", codec).isPositive();
            assertThat(tokens.path("producerDone").asBoolean()).isFalse();
            JsonNode view = MstarClient.JSON.readTree(Files.readString(dir.resolve("request.json")));
            assertThat(view.path("state").asString()).isEqualTo("running");
            // the response took at least the 40 chunks read here, and is still open
            assertThat(view.path("client_stream").path("taken").asLong()).isGreaterThanOrEqualTo(40);
            assertThat(view.path("client_stream").path("completed").asBoolean()).isFalse();
            assertThat(Files.readString(dir.resolve("conductor-metrics.txt"))).contains("mstar_conductor_");
            assertThat(Files.readString(dir.resolve("worker-1-threads.txt"))).contains("mstar-worker-1-engine-loop");
            assertThat(Files.readString(dir.resolve("conductor-threads.txt"))).contains("mstar-conductor-lifecycle");
            assertThat(Files.readString(dir.resolve("client-threads.txt"))).contains("HttpClient");
            // this stream's connection, seen from both ends
            int port = URI.create(STACK.stack().conductor().baseUrl()).getPort();
            List<String[]> sockets = Files.readAllLines(dir.resolve("conductor-sockets.txt")).stream().skip(1)
                    .map(l -> l.split(" ")).filter(f -> f[2].equals("ESTABLISHED")).toList();
            assertThat(sockets).as("server ends").anyMatch(f -> f[0].endsWith(":" + port));
            assertThat(sockets).as("client ends").anyMatch(f -> f[1].endsWith(":" + port));
            // the digest a stall's failure message carries: the view's end and stream, sockets, the conductor's log
            assertThat(Files.readString(dir.resolve("digest.txt"))).startsWith("request running outcome=- ")
                    .contains("client_stream={\"subscribed\":true").contains("holding bytes: ")
                    .contains("conductor log: 0 warnings naming it, no access-log line");
            assertThat(STACK.client().delete("/v1/requests/" + id).statusCode()).isEqualTo(202);
            List<JsonNode> rest = stream.readAll();
            assertThat(rest.get(rest.size() - 1).path("type").asString()).isEqualTo("aborted");
        }
    }

    /** The one request a worker's {@code /actuator/engine} lists, which must be {@code id}. */
    private static JsonNode only(String engine, String id) {
        JsonNode requests = MstarClient.JSON.readTree(engine).path("requests");
        assertThat(requests.size()).as("requests on the worker: %s", engine).isEqualTo(1);
        assertThat(requests.get(0).path("requestId").asString()).isEqualTo(id);
        return requests.get(0);
    }

    /** Baseline as {@link Leaks} reads it: a worker's device bytes are exactly its KV pool, taken at the lm's first batch. */
    static void awaitBaseline(LocalStack stack) {
        Leaks.awaitBaseline(stack, SETTLE);
    }
}
