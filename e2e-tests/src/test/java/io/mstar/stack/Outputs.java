package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/** A counter request's output chunks, regrouped by signal name in delivery order. */
final class Outputs {

    private Outputs() {
    }

    static Map<String, List<Integer>> bySignal(List<JsonNode> chunks) {
        Map<String, List<Integer>> values = new LinkedHashMap<>();
        for (JsonNode chunk : chunks) {
            assertThat(chunk.path("type").asString()).as("chunk %s", chunk).isEqualTo("output");
            assertThat(chunk.path("modality").asString()).as("chunk %s", chunk).isEqualTo("text");
            List<Integer> signal = values.computeIfAbsent(chunk.path("name").asString(), n -> new ArrayList<>());
            chunk.path("data").forEach(v -> signal.add(v.asInt()));
        }
        return values;
    }

    static void assertMatches(String requestId, List<JsonNode> chunks, CounterOracle expected) {
        Map<String, List<Integer>> got = bySignal(chunks);
        assertThat(got.get("prefill_out")).as("%s prefill_out", requestId).isEqualTo(expected.prefillOut());
        assertThat(got.get("token")).as("%s token", requestId).isEqualTo(expected.tokens());
        assertThat(got.getOrDefault("text", List.of())).as("%s text", requestId).isEqualTo(expected.text());
    }
}
