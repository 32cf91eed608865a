package io.mstar.wire;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every field of every golden file matters: deleting any one of them (at any depth) either makes
 * the document invalid or changes the decoded message. So no golden value sits at its default —
 * which would let a decoder that ignores that field (and falls back to the default) pass
 * {@link GoldenFileTests}.
 */
class GoldenFieldsMatterTests {

    private final WireCodec codec = new WireCodec();
    private final ObjectMapper mapper = JsonMapper.builder().build();

    @ParameterizedTest
    @EnumSource(WorkerMessageType.class)
    void deletingAnyFieldOfAWorkerGoldenChangesOrBreaksIt(WorkerMessageType type) {
        WorkerMessage golden = GoldenMessages.worker().get(type);
        assertEveryFieldMatters(GoldenFileTests.golden("worker", type.value()), golden,
                bytes -> codec.decodeWorkerMessage(bytes));
    }

    @ParameterizedTest
    @EnumSource(ConductorMessageType.class)
    void deletingAnyFieldOfAConductorGoldenChangesOrBreaksIt(ConductorMessageType type) {
        ConductorMessage golden = GoldenMessages.conductor().get(type);
        assertEveryFieldMatters(GoldenFileTests.golden("conductor", type.value()), golden,
                bytes -> codec.decodeConductorMessage(bytes));
    }

    private void assertEveryFieldMatters(byte[] json, Object expected, Function<byte[], Object> decode) {
        JsonNode root = mapper.readTree(json);
        List<String[]> fields = new ArrayList<>();
        collect(root, "", fields);
        assertThat(fields).hasSizeGreaterThan(2);
        for (String[] field : fields) {
            ObjectNode copy = (ObjectNode) root.deepCopy();
            ((ObjectNode) copy.at(JsonPointer.compile(field[0]))).remove(field[1]);
            Object decoded;
            try {
                decoded = decode.apply(mapper.writeValueAsBytes(copy));
            } catch (WireFormatException e) {
                continue; // a required field: the document is invalid without it
            }
            assertThat(decoded).as("without %s/%s", field[0], field[1]).isNotEqualTo(expected);
        }
    }

    private static void collect(JsonNode node, String pointer, List<String[]> out) {
        if (node.isObject()) {
            for (String name : node.propertyNames()) {
                out.add(new String[] {pointer, name});
                collect(node.get(name), pointer + "/" + name.replace("~", "~0").replace("/", "~1"), out);
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                collect(node.get(i), pointer + "/" + i, out);
            }
        }
    }
}
