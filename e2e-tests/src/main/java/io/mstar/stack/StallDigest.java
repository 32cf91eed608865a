package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One paragraph of a stall's capture, small enough for a failure message, so that a run whose files are gone (a CI
 * machine) still says which layer held the rest of the stream: whether the conductor ended the request and handed
 * the client stream its end ({@code client_stream}), whether bytes wait in a socket queue, what the conductor logged
 * about the request, and where the client's reader waits.
 */
final class StallDigest {

    /** The thread a test's client reads a whole stream on ({@code MstarClient.Stream.readAll}). */
    static final String READER_THREAD = "e2e-stream-read-all";

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int READER_FRAMES = 4;

    private StallDigest() {
    }

    /** The digest of the capture in {@code dir}, made by {@link StackDiagnostics#capture}. */
    static String of(Path dir, Path conductorLog, String requestId) {
        return String.join("; ", request(dir.resolve("request.json")), sockets(dir.resolve("conductor-sockets.txt")),
                logged(conductorLog, requestId), reader(dir.resolve("client-threads.txt")));
    }

    private static String request(Path file) {
        String text = read(file);
        try {
            JsonNode view = JSON.readTree(text);
            return "request " + view.path("state").asString("?") + " outcome=" + view.path("outcome").asString("-")
                    + " abort_reason=" + view.path("abort_reason").asString("-") + " chunks_delivered="
                    + view.path("chunks_delivered").asInt(-1) + " outputs_waiting=" + view.path("outputs_waiting")
                    + " reads_in_flight=" + view.path("reads_in_flight").asInt(-1) + " client_stream="
                    + view.path("client_stream");
        } catch (RuntimeException e) {
            return "request view unreadable: " + abbreviate(text);
        }
    }

    /** The conductor's connections holding bytes either way; empty queues everywhere mean nothing is in transit. */
    private static String sockets(Path file) {
        List<String> lines = read(file).lines().skip(1).toList();
        List<String> held = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            if (f.length == 5 && (!f[3].equals("0") || !f[4].equals("0"))) {
                held.add(port(f[0]) + "->" + port(f[1]) + " " + f[2] + " send " + f[3] + " recv " + f[4]);
            }
        }
        return "sockets " + lines.size() + ", holding bytes: "
                + (held.isEmpty() ? "none" : String.join(" | ", held));
    }

    /**
     * The conductor's warnings and errors that name the request (a refused emission says why here), and its access-log
     * line: present only once the response's last byte was written to the connection. The id counts as a whole word,
     * so request {@code r-1} is not named by a line about {@code r-10}.
     */
    private static String logged(Path log, String requestId) {
        Pattern id = Pattern.compile("(?<![\\w.-])" + Pattern.quote(requestId) + "(?![\\w.-])");
        try (Stream<String> lines = Files.lines(log)) {
            List<String> named = lines.filter(l -> id.matcher(l).find()).toList();
            List<String> warned = named.stream().filter(l -> l.contains("WARN") || l.contains("ERROR")).toList();
            List<String> accessed = named.stream().filter(l -> l.contains(" request_id=" + requestId + " ")).toList();
            return "conductor log: " + warned.size() + " warnings naming it"
                    + (warned.isEmpty() ? "" : ", the last: " + abbreviate(warned.get(warned.size() - 1)))
                    + (accessed.isEmpty() ? ", no access-log line (the response's end was not written)"
                            : ", access log: " + abbreviate(accessed.get(accessed.size() - 1)));
        } catch (IOException | RuntimeException e) {
            return "conductor log unreadable: " + e;
        }
    }

    /** The top frames of the thread reading the stream ({@code MstarClient.Stream}'s reader). */
    private static String reader(Path file) {
        List<String> lines = read(file).lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("\"" + READER_THREAD + "\"")) {
                List<String> frames = lines.subList(i + 1, Math.min(lines.size(), i + 2 + READER_FRAMES)).stream()
                        .map(String::strip).filter(l -> !l.isEmpty()).toList();
                return "reader: " + String.join(" < ", frames);
            }
        }
        return "reader: not found";
    }

    private static String port(String endpoint) {
        return endpoint.substring(endpoint.lastIndexOf(':'));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }

    private static String abbreviate(String text) {
        String one = text.replace('\n', ' ');
        return one.length() > 300 ? one.substring(0, 300) + "…" : one;
    }
}
