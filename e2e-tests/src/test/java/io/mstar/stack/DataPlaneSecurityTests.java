package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * The local stack's data plane is closed by default (docs/security.md): nothing listens beyond loopback, the
 * conductor's tensor server answers only reads that carry a grant signed with the stack's secret, and requests
 * complete exactly with that on. Grants are minted here by a second, independent implementation of the documented
 * form, so the test pins the wire format too.
 */
@Tag("kafka")
class DataPlaneSecurityTests {

    private static final String HEADER = "Mstar-Read-Grant";

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void noProcessOfTheStackListensOnAnAddressBeyondLoopback() throws IOException {
        LocalStack stack = STACK.stack();
        List<Listener> all = Listener.ofSystem();
        for (ManagedProcess process : stack.processes()) {
            List<Listener> own = Listener.of(process.pid(), all);
            assertThat(own).as("%s listens at all (the check sees its sockets)", process.name()).isNotEmpty();
            assertThat(own).as("%s listeners", process.name()).allSatisfy(l -> assertThat(l.loopback())
                    .as("%s on %s", process.name(), l).isTrue());
        }
        for (ServiceProcess service : stack.workers()) {
            assertThat(Listener.of(service.process().pid(), all)).as("%s: its HTTP and its tensor server", service.name())
                    .hasSizeGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void aTensorReadWithoutAValidGrantIsRefusedBeforeTheStoreIsAskedAndCounted() throws Exception {
        LocalStack stack = STACK.stack();
        int dataPort = conductorDataPort(stack);
        byte[] secret = Files.readString(stack.dataPlaneSecret().file()).strip().getBytes(StandardCharsets.UTF_8);
        long now = System.currentTimeMillis();
        long uuid = 4242L; // a uuid the conductor never had: with a valid grant the answer is 404, without one 401
        String valid = grant(secret, uuid, "worker-0", now + 30_000);
        String[] parts = valid.split(":");
        Map<String, Double> before = rejected(stack);

        assertThat(read(dataPort, uuid, null).statusCode()).as("no grant").isEqualTo(401);
        assertThat(read(dataPort, uuid, grant(secret, uuid + 1, "worker-0", now + 30_000)).statusCode())
                .as("a grant for another uuid").isEqualTo(401);
        assertThat(read(dataPort, uuid, grant(secret, uuid, "worker-0", now - 120_000)).statusCode())
                .as("an expired grant").isEqualTo(401);
        assertThat(read(dataPort, uuid, String.join(":", parts[0], "worker-1", parts[2], parts[3])).statusCode())
                .as("a tampered grant").isEqualTo(401);
        assertThat(read(dataPort, uuid, grant("another-secret-of-at-least-32-bytes!".getBytes(StandardCharsets.UTF_8),
                uuid, "worker-0", now + 30_000)).statusCode()).as("another deployment's secret").isEqualTo(401);
        assertThat(read(dataPort, uuid, valid).statusCode()).as("a valid grant gets past the check").isEqualTo(404);

        Map<String, Double> after = rejected(stack);
        assertThat(after.get("missing") - before.get("missing")).isEqualTo(1.0);
        assertThat(after.get("bad_signature") - before.get("bad_signature")).isEqualTo(3.0);
        assertThat(after.get("expired") - before.get("expired")).isEqualTo(1.0);
    }

    @Test
    void requestsCompleteExactlyWhileEveryCrossProcessReadCarriesAGrant() {
        // The conductor keeps the inputs in its tensor server, so both workers read them over HTTP with grants.
        for (int i = 0; i < 5; i++) {
            List<Integer> tokens = List.of(i, i + 1, i + 2);
            String id = "grants-" + System.nanoTime() + "-" + i;
            try (MstarClient.Stream stream = STACK.client().openStream(
                    MstarClient.counterRequest(id, tokens, 6, null, true))) {
                List<JsonNode> chunks = stream.readAll();
                assertThat(chunks.get(chunks.size() - 1).path("type").asString()).as("%s ends", id).isEqualTo("done");
                Outputs.assertMatches(id, chunks.subList(0, chunks.size() - 1), CounterOracle.of(tokens, 6, null));
            }
        }
        assertThat(rejected(STACK.stack()).values().stream().mapToDouble(Double::doubleValue).sum())
                .as("no read of the stack's own processes was refused").isZero();
    }

    private HttpResponse<String> read(int port, long uuid, String grant) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tensors/" + uuid))
                .timeout(Duration.ofSeconds(10));
        if (grant != null) {
            request.header(HEADER, grant);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@code v1:<reader>:<expiry>:<base64url HMAC-SHA256("mstar-read-grant/v1\n<uuid>\n<reader>\n<expiry>")>}. */
    private static String grant(byte[] secret, long uuid, String reader, long expiry) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        byte[] signature = mac.doFinal(("mstar-read-grant/v1\n" + uuid + "\n" + reader + "\n" + expiry)
                .getBytes(StandardCharsets.US_ASCII));
        return "v1:" + reader + ":" + expiry + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(signature);
    }

    private static Map<String, Double> rejected(LocalStack stack) {
        PrometheusScrape scrape = new PrometheusScrape(HttpProbe.body(stack.conductor().prometheusUrl(),
                Duration.ofSeconds(5)));
        Map<String, Double> byReason = new java.util.HashMap<>();
        for (String reason : List.of("missing", "malformed", "expired", "bad_signature")) {
            byReason.put(reason, scrape.value("mstar_conductor_tensor_reads_rejected_total", Map.of("reason", reason))
                    .orElseThrow(() -> new AssertionError("no rejection counter for " + reason)));
        }
        return byReason;
    }

    /** The conductor listens on its HTTP port and its tensor server's data port; this is the other one. */
    private static int conductorDataPort(LocalStack stack) throws IOException {
        int httpPort = URI.create(stack.conductor().baseUrl()).getPort();
        List<Integer> others = Listener.of(stack.conductor().process().pid(), Listener.ofSystem()).stream()
                .map(Listener::port).filter(p -> p != httpPort).distinct().toList();
        assertThat(others).as("the conductor's data port").hasSize(1);
        return others.get(0);
    }

    /** A listening TCP socket as {@code /proc/net/tcp} and {@code tcp6} show it. */
    record Listener(String address, int port, long inode) {

        private static final String LISTEN = "0A";

        boolean loopback() {
            return address.startsWith("127.") || address.equals("::1") || address.startsWith("::ffff:127.");
        }

        static List<Listener> ofSystem() throws IOException {
            List<Listener> out = new ArrayList<>();
            for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                List<String> lines = Files.readAllLines(Path.of(table));
                for (String line : lines.subList(1, lines.size())) {
                    String[] f = line.trim().split("\\s+");
                    if (f[3].equals(LISTEN)) {
                        String[] local = f[1].split(":");
                        out.add(new Listener(address(local[0]), Integer.parseInt(local[1], 16), Long.parseLong(f[9])));
                    }
                }
            }
            return out;
        }

        /** The listeners whose socket {@code pid} holds open. */
        static List<Listener> of(long pid, List<Listener> all) throws IOException {
            Set<Long> inodes = new HashSet<>();
            try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
                for (Path fd : fds.toList()) {
                    try {
                        String target = Files.readSymbolicLink(fd).toString();
                        if (target.startsWith("socket:[")) {
                            inodes.add(Long.parseLong(target.substring(8, target.length() - 1)));
                        }
                    } catch (IOException closedMeanwhile) {
                        // an fd closed between the listing and the read: not a listener of interest
                    }
                }
            }
            return all.stream().filter(l -> inodes.contains(l.inode())).toList();
        }

        /** The kernel's hex: IPv4 as one little-endian word, IPv6 as four. */
        private static String address(String hex) {
            byte[] b = new byte[hex.length() / 2];
            for (int word = 0; word < b.length / 4; word++) {
                for (int i = 0; i < 4; i++) {
                    int at = word * 8 + (3 - i) * 2;
                    b[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
                }
            }
            if (b.length == 4) {
                return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
            }
            boolean mapped = true;
            for (int i = 0; i < 10; i++) {
                mapped &= b[i] == 0;
            }
            mapped &= (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
            if (mapped) {
                return "::ffff:" + (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff);
            }
            boolean loopback = b[15] == 1;
            for (int i = 0; i < 15; i++) {
                loopback &= b[i] == 0;
            }
            return loopback ? "::1" : java.util.HexFormat.of().formatHex(b);
        }
    }
}
