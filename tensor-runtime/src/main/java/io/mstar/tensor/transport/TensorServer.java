package io.mstar.tensor.transport;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * The producer's tensor server: {@code GET /tensors/{uuid}} on the data port, where uuid is the
 * signed decimal form of the 64-bit id. Serves the whole tensor (200) or one {@code Range} (206,
 * with {@code Content-Range}); 404 for a uuid the source never had, 410 for a freed one, 416 for a
 * range outside the tensor, 400 for a malformed uuid.
 *
 * <p>A read pins the tensor for as long as its bytes are being written to the socket: the pin is
 * taken before the status is decided and released exactly once, when Netty is done with the body
 * buffer (written, failed, or dropped because the client went away; {@link PinnedBody}). Bytes
 * go to the socket straight from the source's buffer (an arena slot
 * is sent from the mapping, no copy).
 *
 * <p>The server does not own the source: closing it stops serving and leaves the tensors alone.
 */
public final class TensorServer implements AutoCloseable {

    private final TensorSource source;
    private final LoopResources loops;
    private final DisposableServer server;
    private final String advertisedHost;

    private TensorServer(TensorSource source, String bindHost, int port, String advertisedHost, int ioThreads) {
        this.source = source;
        this.advertisedHost = advertisedHost;
        this.loops = LoopResources.create("mstar-tensor-server", 1, ioThreads, true);
        DisposableServer bound;
        try {
            bound = HttpServer.create()
                    .host(bindHost)
                    .port(port)
                    .runOn(loops)
                    .route(routes -> routes.get("/tensors/{uuid}", this::serve))
                    .bindNow(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            loops.dispose();
            throw e;
        }
        this.server = bound;
    }

    /**
     * Binds {@code bindHost:port} (port 0: any free port) and serves {@code source}.
     *
     * @param advertisedHost the host consumers use to reach this server; with {@link #port()} it is the
     *                       {@code source_session_id} stamped on this producer's descriptors
     */
    public static TensorServer start(TensorSource source, String bindHost, int port, String advertisedHost,
                                     int ioThreads) {
        return new TensorServer(source, bindHost, port, advertisedHost, ioThreads);
    }

    public int port() {
        return server.port();
    }

    /** {@code host:port}: the descriptors' {@code source_session_id}. */
    public String sessionId() {
        return advertisedHost + ":" + port();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
        // no quiet period: the server is closed, nothing more will be scheduled on these loops
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
    }

    private Publisher<Void> serve(HttpServerRequest request, HttpServerResponse response) {
        long uuid;
        try {
            uuid = Long.parseLong(request.param("uuid"));
        } catch (NumberFormatException | NullPointerException e) {
            return response.status(HttpResponseStatus.BAD_REQUEST).sendString(Mono.just("bad uuid\n"));
        }
        TensorSource.Pin pin = source.pin(uuid);
        if (pin instanceof TensorSource.Pin.Unknown) {
            return response.status(HttpResponseStatus.NOT_FOUND).sendString(Mono.just("unknown tensor " + uuid + "\n"));
        }
        if (pin instanceof TensorSource.Pin.Freed) {
            return response.status(HttpResponseStatus.GONE).sendString(Mono.just("freed tensor " + uuid + "\n"));
        }
        TensorSource.Pin.Pinned pinned = (TensorSource.Pin.Pinned) pin;
        try {
            ByteBuffer bytes = pinned.bytes();
            long length = bytes.remaining();
            String rangeHeader = request.requestHeaders().get(HttpHeaderNames.RANGE);
            ByteBuffer body = bytes;
            if (rangeHeader != null) {
                ByteRange range = ByteRange.parse(rangeHeader, length);
                if (range == null) {
                    pinned.unpin().run();
                    return response.status(HttpResponseStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
                            .header(HttpHeaderNames.CONTENT_RANGE, "bytes */" + length)
                            .send();
                }
                body = bytes.slice(bytes.position() + (int) range.first(), (int) range.length());
                response.status(HttpResponseStatus.PARTIAL_CONTENT)
                        .header(HttpHeaderNames.CONTENT_RANGE, "bytes " + range.first() + "-" + range.last() + "/" + length);
            }
            ByteBuffer toSend = body;
            PinnedBody pinnedBody = new PinnedBody(pinned.unpin());
            return response
                    .header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
                    .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(toSend.remaining()))
                    .send(Mono.fromSupplier(() -> pinnedBody.buffer(toSend)))
                    .then()
                    .doFinally(signal -> pinnedBody.abandon());
        } catch (RuntimeException e) {
            pinned.unpin().run();
            throw e;
        }
    }
}
