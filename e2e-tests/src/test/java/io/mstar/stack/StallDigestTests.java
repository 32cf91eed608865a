package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The digest of a capture whose request ended while its reader still waits: each of its four parts read. */
class StallDigestTests {

    @Test
    void aCaptureOfAnEndedRequestNamesItsEndHeldBytesAccessLineAndReader(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("request.json"), "{\"request_id\":\"r-1\",\"state\":\"removed\",\"outcome\":"
                + "\"completed\",\"chunks_delivered\":21,\"outputs_waiting\":{},\"reads_in_flight\":0,"
                + "\"client_stream\":"
                + "{\"subscribed\":true,\"requested\":80,\"taken\":22,\"completed\":true,\"cancelled\":false}}");
        Files.writeString(dir.resolve("conductor-sockets.txt"), """
                local remote state send-queue receive-queue (bytes)
                0100007F:8080 00000000:0 LISTEN 0 0
                0100007F:8080 0100007F:40000 ESTABLISHED 0 0
                0100007F:40000 0100007F:8080 ESTABLISHED 0 512
                """);
        Path log = dir.resolve("conductor.log");
        Files.writeString(log, """
                INFO AccessLog : POST /v1/requests 200 bytes=7406 duration_ms=2 request_id=r-10 remote=/127.0.0.1:1
                WARN OutputDelivery : request r-10: the end of stream could not be handed to its client: FAIL_Y
                WARN OutputDelivery : request r-1: the end of stream could not be handed to its client: FAIL_X
                INFO AccessLog : POST /v1/requests 200 bytes=9000 duration_ms=3 request_id=r-1 remote=/127.0.0.1:2
                """);
        Files.writeString(dir.resolve("client-threads.txt"), "\"main\" #1 prio=5\n"
                + "   java.lang.Thread.State: WAITING\n\n\"" + StallDigest.READER_THREAD + "\" #40 daemon\n"
                + "   java.lang.Thread.State: WAITING (parking)\n\tat jdk.internal.misc.Unsafe.park(Native Method)\n"
                + "\tat java.util.concurrent.LinkedBlockingQueue.take\n");

        String digest = StallDigest.of(dir, log, "r-1");

        assertThat(digest).startsWith("request removed outcome=completed abort_reason=- chunks_delivered=21 ")
                .contains("\"taken\":22,\"completed\":true")
                .contains("sockets 3, holding bytes: :40000->:8080 ESTABLISHED send 0 recv 512;")
                .contains("conductor log: 1 warnings naming it, the last: WARN OutputDelivery : request r-1:")
                .doesNotContain("FAIL_Y")
                .contains("access log: INFO AccessLog : POST /v1/requests 200 bytes=9000")
                .doesNotContain("bytes=7406")
                .contains("reader: java.lang.Thread.State: WAITING (parking) < at jdk.internal.misc.Unsafe.park");
    }
}
