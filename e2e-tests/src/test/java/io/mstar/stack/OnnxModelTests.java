package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.testing.Seeds;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A user's model from ONNX files, end to end: {@code examples/onnx-two-node.yaml} served as {@code bin/mstar up
 * --deployment} serves it (its {@code hidden} node on worker 0, {@code head} on worker 1), concurrent requests of
 * random inputs answered with the Java reference's outputs, the model listed, and bad inputs refused with a clear
 * error while the stack goes on.
 */
@Tag("kafka")
class OnnxModelTests {

    private static final Duration SETTLE = Duration.ofSeconds(20);
    private static final long SEED = Seeds.of("OnnxModelTests");

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2)
            .deploymentFile(OnnxTwoNodeExample.DEPLOYMENT).backToBaselineAfterEach(SETTLE);

    @Test
    void theCommittedFilesAreWhatTheExampleWrites() throws Exception {
        Path dir = ProjectLayout.discover().root().resolve("examples/onnx");
        assertThat(Files.readAllBytes(dir.resolve(OnnxTwoNodeExample.HIDDEN_FILE))).as("regenerate with "
                + "OnnxTwoNodeExample's main").isEqualTo(OnnxTwoNodeExample.hidden());
        assertThat(Files.readAllBytes(dir.resolve(OnnxTwoNodeExample.HEAD_FILE))).isEqualTo(OnnxTwoNodeExample.head());
    }

    @Test
    void concurrentRequestsGetTheReferenceOutputs() {
        SplittableRandom random = new SplittableRandom(SEED);
        List<float[]> inputs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            float[] x = new float[(1 + random.nextInt(3)) * OnnxTwoNodeExample.IN];
            for (int k = 0; k < x.length; k++) {
                x[k] = (float) (random.nextDouble() * 4 - 2);
            }
            inputs.add(x);
        }
        List<CompletableFuture<HttpResponse<String>>> futures = inputs.stream()
                .map(x -> CompletableFuture.supplyAsync(() -> post(request("float32", x, x.length
                        / OnnxTwoNodeExample.IN, OnnxTwoNodeExample.IN)))).toList();
        for (int i = 0; i < inputs.size(); i++) {
            HttpResponse<String> response = futures.get(i).join();
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            JsonNode y = output(MstarClient.JSON.readTree(response.body()), "y");
            int rows = inputs.get(i).length / OnnxTwoNodeExample.IN;
            assertThat(y.get("modality").asString()).isEqualTo("tensor");
            assertThat(y.get("metadata").get("dtype").asString()).isEqualTo("float32");
            assertThat(y.get("metadata").get("shape").toString()).isEqualTo("[" + rows + "," + OnnxTwoNodeExample.OUT + "]");
            double[] want = OnnxTwoNodeExample.reference(inputs.get(i));
            assertThat(y.get("data").size()).isEqualTo(want.length);
            for (int k = 0; k < want.length; k++) {
                assertThat(y.get("data").get(k).asDouble()).as("request %d, value %d, seed %d", i, k, SEED)
                        .isCloseTo(want[k], org.assertj.core.data.Offset.offset(1e-5));
            }
        }
    }

    @Test
    void theModelIsListed() {
        HttpResponse<String> response = STACK.client().get("/v1/models", Map.of());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"" + OnnxTwoNodeExample.MODEL + "\"");
    }

    @Test
    void badInputsGetClearErrorsAndTheModelGoesOn() {
        float[] five = new float[5];
        HttpResponse<String> wrongShape = post(request("float32", five, 1, 5));
        assertThat(wrongShape.statusCode()).as(wrongShape.body()).isEqualTo(400);
        assertThat(wrongShape.body()).contains("invalid_input").contains("x");

        ObjectNode wrongDtype = request("float32", new float[4], 1, 4);
        ((ObjectNode) wrongDtype.get("inputs").get("x")).put("dtype", "int32");
        HttpResponse<String> dtype = post(wrongDtype);
        assertThat(dtype.statusCode()).as(dtype.body()).isEqualTo(400);
        assertThat(dtype.body()).contains("invalid_input").contains("float32");

        ObjectNode misnamed = request("float32", new float[4], 1, 4);
        ((ObjectNode) misnamed.get("inputs")).set("z", misnamed.get("inputs").get("x"));
        ((ObjectNode) misnamed.get("inputs")).remove("x");
        HttpResponse<String> wrongName = post(misnamed);
        assertThat(wrongName.statusCode()).as(wrongName.body()).isEqualTo(400);
        assertThat(wrongName.body()).contains("invalid_input").contains("[x]").contains("[z]");

        float[] x = {1, -1, 0.5f, 2};
        HttpResponse<String> good = post(request("float32", x, 1, 4));
        assertThat(good.statusCode()).as(good.body()).isEqualTo(200);
    }

    private static ObjectNode request(String dtype, float[] values, long rows, long cols) {
        ByteBuffer bytes = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(values);
        ObjectNode body = MstarClient.JSON.createObjectNode();
        body.put("model", OnnxTwoNodeExample.MODEL);
        ObjectNode x = body.putObject("inputs").putObject("x");
        x.put("base64", Base64.getEncoder().encodeToString(bytes.array()));
        x.put("dtype", dtype);
        x.putArray("shape").add(rows).add(cols);
        return body;
    }

    private static HttpResponse<String> post(ObjectNode body) {
        return STACK.client().post("/v1/requests", body.toString(), Map.of());
    }

    private static JsonNode output(JsonNode response, String name) {
        for (JsonNode chunk : response.get("outputs")) {
            if (chunk.get("name").asString().equals(name)) {
                return chunk;
            }
        }
        throw new AssertionError("no output '" + name + "' in " + response);
    }
}
