package io.mstar.tensor.transport;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.LongKeys;
import io.mstar.tensor.arena.ArenaException;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.wire.TensorReceived;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLException;
import org.agrona.collections.Long2ObjectHashMap;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * Pulls the bytes a descriptor names into a caller's buffer: from the producer's arena when it is on
 * this host ({@link SameHostPolicy}), else from its tensor server with one HTTP range request. If an
 * arena read fails (the file went away between the check and the copy) the read falls back to HTTP
 * once, which then says whether the tensor was freed. With {@link ReaderSettings#tls() TLS} every HTTP read is
 * {@code https://}, verifying the producer's certificate; a read that TLS refuses fails with
 * {@link TensorTransportException.Reason#TLS}, never falling back to plain HTTP.
 *
 * <p>Every read is tracked under its request id until it finishes, so {@link #inFlight} is honest
 * about what {@code ReadsDone} waits for, and finished reads accumulate into the request's next
 * {@code TensorReceived} ({@link #takeReceived}).
 *
 * <p>Thread-safe: the engine loop starts reads and drains results; completions arrive on the copy
 * pool and the HTTP event loops. Whoever creates the reader closes it; it does not close the
 * {@link ArenaReader} or the registry it was handed, but removes the meters it registered.
 */
public final class TensorReader implements AutoCloseable {

    private final ReaderSettings settings;
    private final ReadGrants grants;
    private final String self;
    private final ArenaReader arena;
    private final TransportMeters meters;
    private final ExecutorService copyPool;
    private final LoopResources loops;
    private final ConnectionProvider connections;
    private final HttpClient http;
    private final String scheme;
    private final ConcurrentHashMap<String, RequestReads> requests = new ConcurrentHashMap<>();

    /** A reader that presents no grant: for producers that check none (tests, a trusted network). */
    public TensorReader(ReaderSettings settings, ArenaReader arena, MeterRegistry registry) {
        this(settings, arena, registry, ReadGrants.disabled(), settings.role());
    }

    /** A reader that mints a grant from {@code grants} for {@code self} (its entity id) with every HTTP read. */
    public TensorReader(ReaderSettings settings, ArenaReader arena, MeterRegistry registry, ReadGrants grants,
                        String self) {
        this.settings = settings;
        this.grants = grants;
        this.self = self;
        this.arena = arena;
        this.meters = new TransportMeters(registry, settings.role());
        AtomicInteger n = new AtomicInteger();
        this.copyPool = Executors.newFixedThreadPool(settings.copyThreads(), r -> {
            Thread t = new Thread(r, "mstar-tensor-reader-copy-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.loops = LoopResources.create("mstar-tensor-reader", settings.ioThreads(), true);
        this.connections = ConnectionProvider.create("mstar-tensor-reader", 64);
        HttpClient client = HttpClient.create(connections).runOn(loops).responseTimeout(settings.readTimeout());
        DataPlaneTls tls = settings.tls();
        if (tls.enabled()) {
            // https only, never a fall back to http; hostname verification on (Reactor Netty's default, and
            // configureClient's: against the deployment's server name when one is set).
            SslContext context = tls.clientContext();
            client = client.secure(spec -> spec.sslContext(context).handlerConfigurator(tls::configureClient));
        }
        this.http = client;
        this.scheme = tls.scheme() + "://";
    }

    /**
     * Reads {@code info.nbytes()} bytes (at {@code info.offset()} of the tensor) into
     * {@code destination} from its position; the buffer's own position is left alone. Completes when
     * the bytes have landed, or exceptionally with a {@link TensorTransportException}.
     */
    public CompletableFuture<ReadResult> read(String requestId, TensorPointerInfo info, ByteBuffer destination) {
        if (info.nbytes() > destination.remaining() || info.nbytes() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("destination has " + destination.remaining() + " bytes left, tensor "
                    + info.uuid() + " needs " + info.nbytes());
        }
        ByteBuffer window = destination.duplicate();
        window.limit(window.position() + (int) info.nbytes());
        RequestReads reads = requests.computeIfAbsent(requestId, id -> new RequestReads());
        reads.started();
        long start = System.nanoTime();
        CompletableFuture<ReadResult> result = arenaPath(info)
                ? readShm(info, window, start)
                : readHttp(info, window, start);
        return result.whenComplete((r, error) -> reads.finished(info.uuid(), error == null));
    }

    /** Whether this read goes through the arena: the same-host decision. */
    boolean arenaPath(TensorPointerInfo info) {
        if (info.shmSegment() == null || settings.sameHost() == SameHostPolicy.NEVER) {
            return false;
        }
        if (settings.sameHost() == SameHostPolicy.HOST_AND_FILE
                && !settings.localHosts().contains(host(info.sourceSessionId()))) {
            return false;
        }
        return arena.visible(info.shmSegment());
    }

    /**
     * Completes when {@code requestId} has no read in flight (at once if it has none): what a draining
     * entity waits for before sending {@code ReadsDone}. Reads started later are not waited for; a
     * draining entity starts none.
     */
    public CompletableFuture<Void> inFlight(String requestId) {
        RequestReads reads = requests.get(requestId);
        return reads == null ? CompletableFuture.completedFuture(null) : reads.idle();
    }

    /** Reads in flight for {@code requestId}. */
    public int inFlightCount(String requestId) {
        RequestReads reads = requests.get(requestId);
        return reads == null ? 0 : reads.inFlightCount();
    }

    /**
     * The {@code TensorReceived} for reads of {@code requestId} finished since the last call (uuid to
     * number of reads that landed, failed uuids), or empty if none finished; the counts start over.
     */
    public Optional<TensorReceived> takeReceived(String requestId) {
        RequestReads reads = requests.get(requestId);
        return reads == null ? Optional.empty() : reads.take(requestId);
    }

    /** Stops tracking {@code requestId} (its teardown); reads still in flight finish untracked. */
    public void forget(String requestId) {
        requests.remove(requestId);
    }

    /** Requests being tracked (for leak checks). */
    public int trackedRequests() {
        return requests.size();
    }

    /** Reads in flight over {@code transport}, all requests. */
    public int inFlightReads(Transport transport) {
        return meters.inFlight(transport);
    }

    @Override
    public void close() {
        meters.close();
        copyPool.shutdownNow();
        connections.disposeLater().block(java.time.Duration.ofSeconds(5));
        loops.disposeLater(java.time.Duration.ZERO, java.time.Duration.ofSeconds(5)).block(java.time.Duration.ofSeconds(10));
    }

    private CompletableFuture<ReadResult> readShm(TensorPointerInfo info, ByteBuffer window, long start) {
        meters.started(Transport.SHM);
        CompletableFuture<ReadResult> copied;
        if (info.nbytes() <= settings.inlineCopyMaxBytes() && ArenaReader.isSegment(info.shmSegment())) {
            // A small copy out of a mapping is done before a copy thread could even be woken.
            try {
                copied = CompletableFuture.completedFuture(copyShm(info, window));
            } catch (RuntimeException e) {
                copied = CompletableFuture.failedFuture(e);
            }
        } else {
            copied = CompletableFuture.supplyAsync(() -> copyShm(info, window), copyPool);
        }
        return copied.handle((r, error) -> {
            if (error == null) {
                meters.landed(Transport.SHM, info.nbytes(), System.nanoTime() - start);
                return CompletableFuture.completedFuture(r);
            }
            meters.failed(Transport.SHM, TensorTransportException.Reason.IO);
            if (unwrap(error) instanceof ArenaException) {
                arena.evict(info.shmSegment());
                return readHttp(info, window, System.nanoTime());
            }
            return CompletableFuture.<ReadResult>failedFuture(unwrap(error));
        }).thenCompose(f -> f);
    }

    private ReadResult copyShm(TensorPointerInfo info, ByteBuffer window) {
        arena.read(info.shmSegment(), info.shmOffset() + info.offset(), (int) info.nbytes(), window.duplicate());
        return new ReadResult(info.uuid(), info.nbytes(), Transport.SHM);
    }

    private CompletableFuture<ReadResult> readHttp(TensorPointerInfo info, ByteBuffer window, long start) {
        meters.started(Transport.HTTP);
        long uuid = info.uuid();
        String source = info.sourceSessionId();
        Mono<ReadResult> transfer;
        if (info.nbytes() == 0) {
            // nothing to move; a zero-byte range cannot be written in HTTP
            transfer = Mono.just(new ReadResult(uuid, 0, Transport.HTTP));
        } else {
            long first = info.offset();
            long last = first + info.nbytes() - 1;
            String grant = grants.issue(uuid, self);
            transfer = http.headers(h -> {
                h.set(HttpHeaderNames.RANGE, "bytes=" + first + "-" + last);
                if (grant != null) {
                    h.set(ReadGrants.HEADER, grant);
                }
            })
                    .get()
                    .uri(scheme + source + "/tensors/" + uuid)
                    .response((response, body) -> {
                        int status = response.status().code();
                        if (status != 206 && status != 200) {
                            return body.then(Mono.<ReadResult>error(TensorTransportException.forStatus(status, uuid, source)));
                        }
                        return body.handle((buf, sink) -> {
                            int n = buf.readableBytes();
                            if (n > window.remaining()) {
                                sink.error(new TensorTransportException(TensorTransportException.Reason.TRUNCATED, uuid,
                                        "more than " + info.nbytes() + " bytes from " + source, null));
                                return;
                            }
                            ByteBuffer part = window.duplicate();
                            part.limit(part.position() + n);
                            buf.getBytes(buf.readerIndex(), part);
                            window.position(window.position() + n);
                        }).then(Mono.fromCallable(() -> {
                            if (window.hasRemaining()) {
                                throw new TensorTransportException(TensorTransportException.Reason.TRUNCATED, uuid,
                                        window.remaining() + " of " + info.nbytes() + " bytes missing from " + source, null);
                            }
                            return new ReadResult(uuid, info.nbytes(), Transport.HTTP);
                        }));
                    })
                    .single();
        }
        return transfer
                .onErrorMap(e -> !(e instanceof TensorTransportException), e -> tlsFailure(e)
                        ? new TensorTransportException(TensorTransportException.Reason.TLS, uuid, "TLS with " + source
                                + " failed (" + (settings.tls().enabled()
                                        ? "a plain-text server, or a certificate this reader does not trust"
                                        : "this reader has TLS off") + "; every process of a deployment must use the "
                                + "same mstar.data-plane.tls settings): " + e, e)
                        : new TensorTransportException(TensorTransportException.Reason.IO, uuid,
                                "reading from " + source + " failed: " + e, e))
                .doOnSuccess(r -> meters.landed(Transport.HTTP, info.nbytes(), System.nanoTime() - start))
                .doOnError(e -> meters.failed(Transport.HTTP, ((TensorTransportException) e).reason()))
                .toFuture();
    }

    /**
     * Whether {@code error} is TLS refusing the connection: a handshake that failed (an untrusted certificate, a name
     * that does not match), a plain-text answer to a TLS hello. A handshake that timed out is a stalled producer, as
     * retriable as any other silence.
     */
    static boolean tlsFailure(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SslHandshakeTimeoutException) {
                return false;
            }
            if (t instanceof SSLException) {
                return true;
            }
        }
        return false;
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    static String host(String sessionId) {
        int colon = sessionId.lastIndexOf(':');
        String host = colon < 0 ? sessionId : sessionId.substring(0, colon);
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** One request's reads. Its own monitor guards it; held only for counter updates. */
    private static final class RequestReads {
        private int inFlight;
        private final Long2ObjectHashMap<Integer> landed = LongKeys.map();
        private final List<Long> failed = new ArrayList<>();
        private final List<CompletableFuture<Void>> waiters = new ArrayList<>();

        synchronized void started() {
            inFlight++;
        }

        void finished(long uuid, boolean ok) {
            List<CompletableFuture<Void>> wake = List.of();
            synchronized (this) {
                inFlight--;
                if (ok) {
                    landed.merge(uuid, Integer.valueOf(1), Integer::sum);
                } else {
                    failed.add(uuid);
                }
                if (inFlight == 0 && !waiters.isEmpty()) {
                    wake = new ArrayList<>(waiters);
                    waiters.clear();
                }
            }
            wake.forEach(w -> w.complete(null)); // outside the monitor: waiters' callbacks may read again
        }

        synchronized CompletableFuture<Void> idle() {
            if (inFlight == 0) {
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<Void> waiter = new CompletableFuture<>();
            waiters.add(waiter);
            return waiter;
        }

        synchronized int inFlightCount() {
            return inFlight;
        }

        synchronized Optional<TensorReceived> take(String requestId) {
            if (landed.isEmpty() && failed.isEmpty()) {
                return Optional.empty();
            }
            TensorReceived received = new TensorReceived(requestId, new HashMap<>(landed), new ArrayList<>(failed));
            landed.clear();
            failed.clear();
            return Optional.of(received);
        }
    }
}
