package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

/** The test client itself: a stream whose body never ends fails its reader instead of hanging the suite. */
class MstarClientTests {

    @Test
    void aBodyThatNeverEndsFailsReadAllWithWhatWasReadAndAnEndedOneReturnsEveryChunk() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/requests", exchange -> {
            boolean endless = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8).contains("endless");
            exchange.getResponseHeaders().add("Content-Type", "application/x-ndjson");
            exchange.getResponseHeaders().add("Mstar-Request-Id", endless ? "endless" : "ended");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write("{\"type\":\"output\"}\n".getBytes(StandardCharsets.UTF_8));
                body.flush();
                if (endless) {
                    release.await();
                } else {
                    body.write("{\"type\":\"done\"}\n".getBytes(StandardCharsets.UTF_8));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        server.start();
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        try (MstarClient client = new MstarClient(base)) {
            try (MstarClient.Stream ended = client.openStream(MstarClient.JSON.createObjectNode().put("request_id", "ended"))) {
                assertThat(ended.readAll(Duration.ofSeconds(10))).extracting(c -> c.path("type").asString())
                        .isEqualTo(List.of("output", "done"));
            }
            try (MstarClient.Stream endless = client.openStream(MstarClient.JSON.createObjectNode().put("request_id", "endless"))) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> endless.readAll(Duration.ofMillis(500)))
                        .isInstanceOf(AssertionError.class)
                        .hasMessageContaining("request endless did not end within 500 ms; read 1 chunks ({output=1}), "
                                + "the last output, 18 body bytes");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            }
        } finally {
            release.countDown();
            server.stop(0);
        }
    }
}
