package io.mstar.helm;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The two Kubernetes API calls the chart's {@code lookup} makes, served on loopback: discovery of
 * {@code /api/v1} and a GET of one Secret. helm-java renders with a live-cluster dry run, so a
 * {@code lookup} needs an API server; this one answers 404 for unknown Secrets (what a first install
 * sees) and returns the Secrets a test put (what an upgrade sees). The kubeconfig that points Helm here
 * is written to the path in the {@code KUBECONFIG} variable the build sets for the test JVM.
 */
final class FakeKubeApi implements AutoCloseable {

    private static final String DISCOVERY = """
            {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[
             {"name":"secrets","singularName":"secret","namespaced":true,"kind":"Secret","verbs":["get","list"]}]}""";

    private final HttpServer server;
    private final Map<String, String> secrets = new ConcurrentHashMap<>();

    FakeKubeApi() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", this::handle);
        server.start();
        writeKubeconfig();
    }

    /** Makes {@code namespace/name} exist with one data key, as a previous install would have left it. */
    void putSecret(String namespace, String name, String key, String value) {
        String data = Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
        secrets.put("/api/v1/namespaces/" + namespace + "/secrets/" + name, """
                {"kind":"Secret","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s"},"type":"Opaque",
                 "data":{"%s":"%s"}}""".formatted(name, namespace, key, data));
    }

    private void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String body;
        int status;
        if (path.equals("/api/v1")) {
            status = 200;
            body = DISCOVERY;
        } else if (secrets.containsKey(path)) {
            status = 200;
            body = secrets.get(path);
        } else {
            status = 404;
            body = """
                    {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"%s not found"}"""
                    .formatted(path);
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (var out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private void writeKubeconfig() {
        String location = System.getenv("KUBECONFIG");
        if (location == null || location.isBlank()) {
            throw new IllegalStateException("KUBECONFIG is not set for the test JVM (helm/pom.xml sets it)");
        }
        String config = """
                apiVersion: v1
                kind: Config
                clusters:
                  - name: fake
                    cluster:
                      server: http://127.0.0.1:%d
                users:
                  - name: fake
                    user: {}
                contexts:
                  - name: fake
                    context:
                      cluster: fake
                      user: fake
                      namespace: %s
                current-context: fake
                """.formatted(server.getAddress().getPort(), Chart.NAMESPACE);
        try {
            Path file = Path.of(location);
            Files.createDirectories(file.getParent());
            Files.writeString(file, config);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
