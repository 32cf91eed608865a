package io.mstar.stack;

import java.io.BufferedReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** The conductor's public and admin HTTP APIs as a client sees them: real HTTP, nothing shared. */
final class MstarClient implements AutoCloseable {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private final String baseUrl;
    /** Ours, so close() can stop the client's threads (HttpClient.close() is Java 21). */
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .executor(executor).connectTimeout(Duration.ofSeconds(5)).build();

    /** What a stream that stopped moving leaves for its reader to read: answers where, or null. */
    private final Function<String, Path> onStall;

    MstarClient(String baseUrl) {
        this(baseUrl, requestId -> null);
    }

    /** A client of {@code stack}'s conductor; a stream that stops moving captures the stack's diagnostics. */
    MstarClient(LocalStack stack) {
        this(stack.conductor().baseUrl(), requestId -> StackDiagnostics.capture(stack, requestId));
    }

    private MstarClient(String baseUrl, Function<String, Path> onStall) {
        this.baseUrl = baseUrl;
        this.onStall = onStall;
    }

    /** A counter request body; {@code stopAt} null means no data-dependent stop. */
    static ObjectNode counterRequest(String requestId, List<Integer> tokens, int maxTokens, Integer stopAt, boolean stream) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", "counter");
        if (requestId != null) {
            body.put("request_id", requestId);
        }
        ObjectNode inputs = body.putObject("inputs");
        inputs.putObject("tokens").putArray("tokens").addAll(tokens.stream().map(JSON.getNodeFactory()::numberNode).toList());
        body.put("max_tokens", maxTokens);
        body.put("stream", stream);
        if (stopAt != null) {
            body.putObject("model_kwargs").put("stop_at", stopAt);
        }
        return body;
    }

    HttpResponse<String> post(String path, String body, Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return send(request.build());
    }

    HttpResponse<String> get(String path, Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(30)).GET();
        headers.forEach(request::header);
        return send(request.build());
    }

    HttpResponse<String> delete(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(30)).DELETE().build());
    }

    /** POST of a raw body of {@code bytes} bytes (for the size limit). */
    HttpResponse<String> postBytes(String path, byte[] bytes) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(bytes)).build());
    }

    static Map<String, String> bearer(String token) {
        return Map.of("Authorization", "Bearer " + token);
    }

    /** Opens a streaming submission (NDJSON); the caller reads chunks and may disconnect. */
    Stream openStream(ObjectNode body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/requests"))
                .timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/json")
                .header("Accept", "application/x-ndjson")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
        try {
            HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            return new Stream(response, onStall);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** One NDJSON response, read chunk by chunk. */
    static final class Stream implements AutoCloseable {
        /**
         * How long {@link #readAll()} waits for the body to end. Far beyond any stream the suite asks for; a body that
         * never ends fails its test with what was read instead of hanging the build.
         */
        static final Duration READ_ALL_LIMIT = Duration.ofSeconds(120);

        private final HttpResponse<InputStream> response;
        private final BufferedReader reader;
        /** Body bytes the client library handed over so far: beside the access log's count, where the rest stopped. */
        private final AtomicLong bodyBytes = new AtomicLong();
        private final List<JsonNode> chunks = new ArrayList<>();
        private final Function<String, Path> onStall;

        Stream(HttpResponse<InputStream> response, Function<String, Path> onStall) {
            this.response = response;
            this.onStall = onStall;
            this.reader = new BufferedReader(new InputStreamReader(new FilterInputStream(response.body()) {
                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    int n = super.read(b, off, len);
                    bodyBytes.addAndGet(Math.max(n, 0));
                    return n;
                }
            }, StandardCharsets.UTF_8));
        }

        int status() {
            return response.statusCode();
        }

        /** The next chunk, or empty at the end of the body. */
        Optional<JsonNode> next() {
            try {
                String line;
                do {
                    line = reader.readLine();
                } while (line != null && line.isBlank());
                if (line == null) {
                    return Optional.empty();
                }
                JsonNode chunk = JSON.readTree(line);
                synchronized (chunks) {
                    chunks.add(chunk);
                }
                return Optional.of(chunk);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** How many chunks this stream has read so far (any thread; for failure messages). */
        int chunksSoFar() {
            synchronized (chunks) {
                return chunks.size();
            }
        }

        /** Reads to the end of the body, within {@link #READ_ALL_LIMIT}; every chunk read so far, in order. */
        List<JsonNode> readAll() {
            return readAll(READ_ALL_LIMIT);
        }

        /** Reads to the end of the body, within {@code limit}; every chunk read so far, in order. */
        List<JsonNode> readAll(Duration limit) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            Thread reading = new Thread(() -> {
                try {
                    while (next().isPresent()) {
                        // collecting
                    }
                    ended.complete(null);
                } catch (RuntimeException e) {
                    ended.completeExceptionally(e);
                }
            }, StallDigest.READER_THREAD);
            reading.setDaemon(true);
            reading.start();
            try {
                ended.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                String id = response.headers().firstValue("Mstar-Request-Id").orElse("?");
                Path diagnostics = onStall.apply(id); // before the close: the request is still where it stopped
                close();
                throw new AssertionError("the body of request " + id + " did not end within " + limit.toMillis()
                        + " ms; read " + chunksSoFar() + " chunks (" + chunkNames() + "), the last " + lastChunkType()
                        + ", " + bodyBytes.get() + " body bytes"
                        + (diagnostics == null ? ""
                                : "; the stack's state then: " + diagnostics + " (" + digest(diagnostics) + ")"), e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            synchronized (chunks) {
                return List.copyOf(chunks);
            }
        }

        /** The capture's own summary, so a failure whose files are gone still tells where the stream stopped. */
        private static String digest(Path diagnostics) {
            try {
                return Files.readString(diagnostics.resolve("digest.txt"));
            } catch (IOException e) {
                return "no digest: " + e;
            }
        }

        /** How many chunks of each output name were read, in order of first appearance. */
        private String chunkNames() {
            Map<String, Integer> names = new LinkedHashMap<>();
            synchronized (chunks) {
                chunks.forEach(c -> names.merge(c.path("name").asString(c.path("type").asString()), 1, Integer::sum));
            }
            return names.toString();
        }

        private String lastChunkType() {
            synchronized (chunks) {
                return chunks.isEmpty() ? "none" : chunks.get(chunks.size() - 1).path("type").asString();
            }
        }

        /**
         * Drops the connection mid-stream, as a client that went away. Closes the body, not the reader: a reader
         * blocked in {@code readLine} holds the reader's lock, and closing through it would wait for that read.
         */
        @Override
        public void close() {
            try {
                response.body().close();
            } catch (IOException e) {
                // already gone
            }
        }
    }
}
