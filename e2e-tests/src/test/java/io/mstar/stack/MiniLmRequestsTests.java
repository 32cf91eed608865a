package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code minilm-embed} end to end with its real weights on worker 0 of a two-worker stack: concurrent sentences
 * through {@code POST /v1/requests}, each answered with a unit-length float32 [384] embedding and its word-piece
 * count, and "a cat sits on the mat" closer to "a kitten is on a rug" than to "stock markets fell".
 */
@Tag("kafka")
class MiniLmRequestsTests {

    private static final Duration SETTLE = Duration.ofSeconds(20);

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2).backToBaselineAfterEach(SETTLE);

    private static JsonNode embed(String text) {
        ObjectNode body = MstarClient.JSON.createObjectNode();
        body.put("model", "minilm-embed");
        body.putObject("inputs").putObject("text").put("text", text);
        HttpResponse<String> response = STACK.client().post("/v1/requests", body.toString(), Map.of());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return MstarClient.JSON.readTree(response.body());
    }

    private static double[] vector(JsonNode response) {
        for (JsonNode chunk : response.get("outputs")) {
            if (chunk.get("name").asString().equals("embedding")) {
                assertThat(chunk.get("modality").asString()).isEqualTo("embedding");
                assertThat(chunk.get("metadata").get("dtype").asString()).isEqualTo("float32");
                double[] v = new double[chunk.get("data").size()];
                for (int i = 0; i < v.length; i++) {
                    v[i] = chunk.get("data").get(i).asDouble();
                }
                return v;
            }
        }
        throw new AssertionError("no embedding in " + response);
    }

    private static int numTokens(JsonNode response) {
        for (JsonNode chunk : response.get("outputs")) {
            if (chunk.get("name").asString().equals("num_tokens")) {
                assertThat(chunk.get("modality").asString()).isEqualTo("usage");
                return chunk.get("data").get(0).asInt();
            }
        }
        throw new AssertionError("no num_tokens in " + response);
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    @Test
    void concurrentSentencesGetUnitEmbeddingsAndTheCatIsCloserToTheKitten() throws Exception {
        List<String> texts = List.of("a cat sits on the mat", "a kitten is on a rug", "stock markets fell");
        List<CompletableFuture<JsonNode>> futures = texts.stream()
                .map(t -> CompletableFuture.supplyAsync(() -> embed(t))).toList();
        List<JsonNode> responses = futures.stream().map(CompletableFuture::join).toList();

        double[][] v = new double[3][];
        for (int i = 0; i < 3; i++) {
            assertThat(responses.get(i).get("status").asString()).isEqualTo("done");
            v[i] = vector(responses.get(i));
            assertThat(v[i]).hasSize(384);
            assertThat(dot(v[i], v[i])).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-4));
        }
        assertThat(numTokens(responses.get(0))).isEqualTo(8);
        assertThat(numTokens(responses.get(2))).isEqualTo(5);
        double kitten = dot(v[0], v[1]);
        double stocks = dot(v[0], v[2]);
        System.out.printf("e2e minilm-embed: cat~kitten %.4f, cat~stocks %.4f%n", kitten, stocks);
        assertThat(kitten).isGreaterThan(stocks + 0.3);
    }
}
