package io.mstar.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What a stack looks like when a request stopped moving, written beside its logs so that a failed run can be read
 * afterwards (docs/operability.md#a-request-that-does-not-move): the conductor's requests, the stalled request's
 * own view (live or removed), the conductor's metrics, each worker's {@code /actuator/engine}, the conductor's TCP
 * queues, and a thread dump of every live service and of the client.
 */
public final class StackDiagnostics {

    private static final Duration GET_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration DUMP_TIMEOUT = Duration.ofSeconds(20);

    private StackDiagnostics() {
    }

    /**
     * Writes the diagnostics of {@code requestId} under {@code <state dir>/diagnostics/<request id>-<epoch ms>} and
     * answers that directory. Never throws for a service that does not answer: its file says why instead.
     */
    public static Path capture(LocalStack stack, String requestId) {
        Path dir = stack.stateDir().resolve("diagnostics")
                .resolve(requestId.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + Instant.now().toEpochMilli());
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ServiceProcess conductor = stack.conductor();
        Map<String, String> admin = Map.of("Authorization", "Bearer " + stack.adminToken().value());
        write(dir.resolve("conductor-requests.json"), () -> HttpProbe.body(conductor.baseUrl() + "/admin/requests",
                GET_TIMEOUT, admin));
        write(dir.resolve("conductor-workers.json"), () -> HttpProbe.body(conductor.baseUrl() + "/admin/workers",
                GET_TIMEOUT, admin));
        // bytes queued on the client's connections: sent and unread, or never sent (SocketQueues)
        write(dir.resolve("conductor-sockets.txt"), () -> SocketQueues.of(URI.create(conductor.baseUrl()).getPort()));
        // the stalled request's own view, live or removed: its state, outcome and abort reason
        write(dir.resolve("request.json"), () -> HttpProbe.body(conductor.baseUrl() + "/v1/requests/"
                + URLEncoder.encode(requestId, StandardCharsets.UTF_8), GET_TIMEOUT));
        write(dir.resolve("conductor-metrics.txt"), () -> HttpProbe.body(conductor.prometheusUrl(), GET_TIMEOUT));
        for (ServiceProcess worker : stack.workers()) {
            write(dir.resolve(worker.name() + "-engine.json"),
                    () -> HttpProbe.body(worker.baseUrl() + "/actuator/engine", GET_TIMEOUT));
        }
        for (ManagedProcess process : stack.processes()) {
            write(dir.resolve(process.name() + "-threads.txt"),
                    () -> process.isAlive() ? threadDump(process.pid()) : "not alive");
        }
        // the client's side: where the threads reading the stalled stream wait
        write(dir.resolve("client-threads.txt"), () -> threadDump(ProcessHandle.current().pid()));
        write(dir.resolve("digest.txt"), () -> StallDigest.of(dir, conductor.spec().logFile(), requestId));
        return dir;
    }

    private static String threadDump(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print", "-l")
                    .redirectErrorStream(true).start();
            byte[] out = dump.getInputStream().readAllBytes();
            if (!dump.waitFor(DUMP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                dump.destroyForcibly();
                return "jcmd did not answer within " + DUMP_TIMEOUT;
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "jcmd failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static void write(Path file, Supplier<String> content) {
        String text;
        try {
            text = content.get();
        } catch (RuntimeException e) {
            text = "failed: " + e;
        }
        try {
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
