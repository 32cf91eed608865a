package io.mstar.wire;

import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Regenerates the golden files from {@link GoldenMessages} (run by hand only when the format is
 * meant to change; review the diff). Not a test.
 */
final class GoldenWriterMain {
    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : "shared-model/src/test/resources/golden");
        WireCodec codec = new WireCodec();
        ObjectMapper mapper = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
        for (var e : GoldenMessages.worker().entrySet()) {
            write(mapper, root.resolve("worker/" + e.getKey().value() + ".json"), codec.encode(e.getValue()));
        }
        for (var e : GoldenMessages.conductor().entrySet()) {
            write(mapper, root.resolve("conductor/" + e.getKey().value() + ".json"), codec.encode(e.getValue()));
        }
    }

    private static void write(ObjectMapper mapper, Path file, byte[] json) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, mapper.writeValueAsString(mapper.readTree(json)) + "\n");
    }
}
