package io.mstar.wire;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The golden files pin the wire format: one document per message type, decoded to a value built
 * by hand and re-encoded to the same JSON tree.
 */
class GoldenFileTests {

    private static final Path GOLDEN = Path.of("src/test/resources/golden");
    private final WireCodec codec = new WireCodec();
    private final ObjectMapper mapper = JsonMapper.builder().build();

    static byte[] golden(String family, String type) {
        try (InputStream in = GoldenFileTests.class.getResourceAsStream("/golden/" + family + "/" + type + ".json")) {
            if (in == null) {
                throw new AssertionError("no golden file for " + family + "/" + type);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest
    @EnumSource(WorkerMessageType.class)
    void workerGoldenDecodesToTheHandBuiltMessage(WorkerMessageType type) {
        WorkerMessage expected = GoldenMessages.worker().get(type);
        assertThat(codec.decodeWorkerMessage(golden("worker", type.value()))).isEqualTo(expected);
    }

    @ParameterizedTest
    @EnumSource(WorkerMessageType.class)
    void workerMessageEncodesToItsGoldenTree(WorkerMessageType type) {
        JsonNode encoded = mapper.readTree(codec.encode(GoldenMessages.worker().get(type)));
        assertThat(encoded).isEqualTo(mapper.readTree(golden("worker", type.value())));
    }

    @ParameterizedTest
    @EnumSource(ConductorMessageType.class)
    void conductorGoldenDecodesToTheHandBuiltMessage(ConductorMessageType type) {
        ConductorMessage expected = GoldenMessages.conductor().get(type);
        assertThat(codec.decodeConductorMessage(golden("conductor", type.value()))).isEqualTo(expected);
    }

    @ParameterizedTest
    @EnumSource(ConductorMessageType.class)
    void conductorMessageEncodesToItsGoldenTree(ConductorMessageType type) {
        JsonNode encoded = mapper.readTree(codec.encode(GoldenMessages.conductor().get(type)));
        assertThat(encoded).isEqualTo(mapper.readTree(golden("conductor", type.value())));
    }

    @Test
    void thereIsExactlyOneGoldenFilePerMessageType() throws IOException {
        assertThat(names(GOLDEN.resolve("worker")))
                .isEqualTo(Arrays.stream(WorkerMessageType.values()).map(t -> t.value() + ".json").collect(Collectors.toSet()));
        assertThat(names(GOLDEN.resolve("conductor")))
                .isEqualTo(Arrays.stream(ConductorMessageType.values()).map(t -> t.value() + ".json").collect(Collectors.toSet()));
        try (Stream<Path> families = Files.list(GOLDEN)) {
            assertThat(families.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("worker", "conductor");
        }
    }

    @Test
    void wireValuesOfEveryTypeArePinned() {
        assertThat(Arrays.stream(WorkerMessageType.values()).map(WorkerMessageType::value))
                .containsExactly("collective_bootstrap", "conductor_heartbeat", "drain_request", "input_signals", "new_request", "remove_request", "schedule_tp",
                        "stop_loops", "tensor_received", "tp_no_spec", "unpersist");
        assertThat(Arrays.stream(ConductorMessageType.values()).map(ConductorMessageType::value))
                .containsExactly("abort_request", "fail_requests", "new_request", "reads_done", "result_tensors",
                        "setup_done", "worker_graphs_done");
        assertThat(Arrays.stream(MessageSource.values()).map(MessageSource::code)).containsExactly(0, 1, 2);
        assertThat(Arrays.stream(Status.values()).map(Status::value))
                .containsExactly("waiting", "ready", "in_progress", "done");
    }

    @ParameterizedTest
    @EnumSource(WorkerMessageType.class)
    void reencodingADecodedGoldenIsStableByteForByte(WorkerMessageType type) {
        // Re-encoding the decoded golden is stable byte for byte.
        byte[] once = codec.encode(codec.decodeWorkerMessage(golden("worker", type.value())));
        assertThat(codec.encode(codec.decodeWorkerMessage(once))).isEqualTo(once);
    }

    private static Set<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
    }
}
