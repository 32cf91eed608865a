package io.mstar.tensor.transport;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.metrics.MeterDeclaration;
import io.mstar.metrics.RegisteredMeters;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.ssl.SslContext;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
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
 * range outside the tensor, 400 for a malformed uuid; 401 for a read without a valid {@link ReadGrants grant}, checked
 * before the store is touched, counted by reason ({@code mstar_<role>_tensor_reads_rejected_total}) and never logged.
 *
 * <p>With {@link TensorServerSettings#tls() TLS} the server serves HTTPS only, with the deployment's certificate; a
 * plain-HTTP request on the data port gets a 308 redirect to {@code https} (no tensor, no grant check), which a reader
 * with TLS off reports as {@link TensorTransportException.Reason#TLS}.
 *
 * <p>A read pins the tensor for as long as its bytes are being written to the socket: the pin is
 * taken before the status is decided and released exactly once, when Netty is done with the body
 * buffer (written, failed, or dropped because the client went away; {@link PinnedBody}). Bytes
 * go to the socket straight from the source's buffer (an arena slot
 * is sent from the mapping, no copy).
 *
 * <p>The server does not own the source: closing it stops serving and leaves the tensors alone; it removes the meters
 * it registered.
 */
public final class TensorServer implements AutoCloseable {

    /** {@code mstar_<role>_tensor_reads_rejected_total{reason}}. */
    static final MeterDeclaration READS_REJECTED = new MeterDeclaration("tensor.reads.rejected", Meter.Type.COUNTER,
            null, List.of("reason"), "Tensor reads refused before the store was touched, by reason");

    private final TensorSource source;
    private final ReadGrants grants;
    private final LoopResources loops;
    private final DisposableServer server;
    private final String advertisedHost;
    private final boolean tls;
    private final RegisteredMeters meters;
    private final Map<ReadGrants.Rejection, Counter> rejected = new EnumMap<>(ReadGrants.Rejection.class);

    private TensorServer(TensorSource source, TensorServerSettings settings, ReadGrants grants, MeterRegistry registry) {
        this.source = source;
        this.grants = grants;
        this.advertisedHost = settings.advertisedHost();
        this.tls = settings.tls().enabled();
        this.meters = new RegisteredMeters(registry);
        for (ReadGrants.Rejection r : ReadGrants.Rejection.values()) {
            rejected.put(r, meters.add(READS_REJECTED.under("mstar." + settings.role()).counter(r.value())
                    .register(registry)));
        }
        this.loops = LoopResources.create("mstar-tensor-server", 1, settings.ioThreads(), true);
        DisposableServer bound;
        try {
            HttpServer http = HttpServer.create()
                    .host(settings.bindAddress())
                    .port(settings.port())
                    .runOn(loops);
            if (settings.tls().enabled()) {
                // HTTPS only; a plain-HTTP request is answered with a redirect to https and never reaches the store,
                // so a reader with TLS off fails with a clear TLS error rather than a reset connection.
                SslContext context = settings.tls().serverContext();
                http = http.secure(spec -> spec.sslContext(context), true);
            }
            bound = http
                    .route(routes -> routes.get("/tensors/{uuid}", this::serve))
                    .bindNow(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            loops.dispose();
            meters.close();
            throw e;
        }
        this.server = bound;
    }

    /**
     * Binds {@code settings.bindAddress():port} (port 0: any free port) and serves {@code source} to readers whose
     * grants {@code grants} accepts; registers its rejection counters in {@code registry}.
     */
    public static TensorServer start(TensorSource source, TensorServerSettings settings, ReadGrants grants,
                                     MeterRegistry registry) {
        return new TensorServer(source, settings, grants, registry);
    }

    /**
     * Binds {@code bindAddress:port} (port 0: any free port) and serves {@code source} to anyone, with no grant and
     * meters nobody reads: for tests and tools on one host.
     *
     * @param advertisedHost the host consumers use to reach this server; with {@link #port()} it is the
     *                       {@code source_session_id} stamped on this producer's descriptors
     */
    public static TensorServer start(TensorSource source, String bindAddress, int port, String advertisedHost,
                                     int ioThreads) {
        return new TensorServer(source, new TensorServerSettings(bindAddress, port, advertisedHost, ioThreads, "test"),
                ReadGrants.disabled(), new SimpleMeterRegistry());
    }

    public int port() {
        return server.port();
    }

    /** Whether this server serves HTTPS. */
    public boolean tls() {
        return tls;
    }

    /** {@code host:port}: the descriptors' {@code source_session_id} (the same with or without TLS). */
    public String sessionId() {
        return advertisedHost + ":" + port();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
        meters.close();
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
        ReadGrants.Rejection refused = grants.check(request.requestHeaders().get(ReadGrants.HEADER), uuid);
        if (refused != null) {
            rejected.get(refused).increment();
            return response.status(HttpResponseStatus.UNAUTHORIZED).sendString(Mono.just("no valid read grant\n"));
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
