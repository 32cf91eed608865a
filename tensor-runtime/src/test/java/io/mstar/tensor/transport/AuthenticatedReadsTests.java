package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.arena.ArenaReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tensor server with grants serves a read only with a valid grant for that tensor, refuses every other read with
 * 401 before the store is touched and counts it by reason; a reader with the deployment's secret reads as before.
 */
class AuthenticatedReadsTests {

    private static final byte[] SECRET = "a-data-plane-secret-of-thirty-two-bytes!".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path arenaDir;

    private final ReadGrants grants = ReadGrants.signedWith(SECRET, Duration.ofSeconds(60), Clock.systemUTC());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ServedTensors tensors = new ServedTensors();
    private final HttpClient http = HttpClient.newHttpClient();
    private TensorServer server;

    @BeforeEach
    void serve() {
        tensors.publish(7, ByteBuffer.wrap("seven".getBytes(StandardCharsets.US_ASCII)), () -> { });
        server = TensorServer.start(tensors, new TensorServerSettings("127.0.0.1", 0, "127.0.0.1", 1, "worker"),
                grants, registry);
    }

    @AfterEach
    void close() {
        server.close();
        assertThat(registry.getMeters()).as("the server removed its meters").isEmpty();
    }

    @Test
    void aValidGrantReadsTheTensor() throws Exception {
        HttpResponse<String> ok = get(7, grants.issue(7, "worker-1"));
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("seven");
        assertThat(rejected("missing") + rejected("bad_signature") + rejected("expired") + rejected("malformed")).isZero();
    }

    @Test
    void everyReadWithoutAValidGrantIs401CountedByReasonAndNeverPinsTheTensor() throws Exception {
        String good = grants.issue(7, "worker-1");
        String[] parts = good.split(":");
        ReadGrants longAgo = ReadGrants.signedWith(SECRET, Duration.ofSeconds(60),
                Clock.offset(Clock.systemUTC(), Duration.ofHours(-1)));

        assertThat(get(7, null).statusCode()).isEqualTo(401);
        assertThat(get(7, grants.issue(8, "worker-1")).statusCode()).as("a grant for another uuid").isEqualTo(401);
        assertThat(get(7, longAgo.issue(7, "worker-1")).statusCode()).as("expired").isEqualTo(401);
        assertThat(get(7, String.join(":", parts[0], "worker-2", parts[2], parts[3])).statusCode()).as("tampered")
                .isEqualTo(401);
        assertThat(get(7, "Bearer 123").statusCode()).isEqualTo(401);

        assertThat(rejected("missing")).isEqualTo(1);
        assertThat(rejected("bad_signature")).isEqualTo(2);
        assertThat(rejected("expired")).isEqualTo(1);
        assertThat(rejected("malformed")).isEqualTo(1);
        assertThat(tensors.pins()).isZero();
        assertThat(tensors.live()).isEqualTo(1);
        // Checked before the store is asked: a uuid it never had is 401 too, not 404, so uuids cannot be probed.
        assertThat(get(999, null).statusCode()).isEqualTo(401);
        assertThat(get(999, grants.issue(999, "worker-1")).statusCode()).isEqualTo(404);
    }

    @Test
    void aReaderWithTheSecretReadsAndOneWithAnotherSecretIsRefused() throws Exception {
        TensorPointerInfo info = new TensorPointerInfo(7, List.of(5L), List.of(1L), "uint8", 5, 0L,
                "127.0.0.1:" + server.port(), "worker-0");
        ReaderSettings settings = ReaderSettings.defaults("worker", Set.of("127.0.0.1"))
                .withSameHost(SameHostPolicy.NEVER).withArenaDirectory(arenaDir);
        try (ArenaReader arena = new ArenaReader(arenaDir);
                TensorReader reader = new TensorReader(settings, arena, new SimpleMeterRegistry(), grants, "worker-1");
                TensorReader stranger = new TensorReader(settings, arena, new SimpleMeterRegistry(),
                        ReadGrants.signedWith("another-deployment-secret-of-32-bytes".getBytes(StandardCharsets.UTF_8),
                                Duration.ofSeconds(60), Clock.systemUTC()), "worker-1")) {
            ByteBuffer into = ByteBuffer.allocateDirect(5);
            reader.read("r", info, into).get(10, TimeUnit.SECONDS);
            byte[] bytes = new byte[5];
            into.duplicate().get(bytes);
            assertThat(new String(bytes, StandardCharsets.US_ASCII)).isEqualTo("seven");

            assertThatThrownBy(() -> stranger.read("r", info, ByteBuffer.allocateDirect(5)).join())
                    .isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(TensorTransportException.class)
                    .satisfies(e -> assertThat(((TensorTransportException) e.getCause()).reason())
                            .isEqualTo(TensorTransportException.Reason.UNAUTHORIZED));
        }
        assertThat(rejected("bad_signature")).isEqualTo(1);
    }

    private HttpResponse<String> get(long uuid, String grant) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                + "/tensors/" + uuid)).timeout(Duration.ofSeconds(10));
        if (grant != null) {
            request.header(ReadGrants.HEADER, grant);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private double rejected(String reason) {
        return registry.get("mstar.worker.tensor.reads.rejected").tag("reason", reason).counter().count();
    }
}
