package io.mstar.stack;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A conductor or worker service running from its exec jar as its own JVM, reachable over real
 * HTTP on 127.0.0.1. Readiness is the service's own actuator readiness group, so "ready" here
 * means exactly what a Kubernetes probe would see.
 */
public final class ServiceProcess implements AutoCloseable {

    /**
     * How a service is started: its entity name, jar, HTTP port, Spring arguments and JVM options beyond the heap and
     * collector every service gets.
     *
     * @param bindAddress what the service's HTTP server binds ({@code 127.0.0.1} unless {@code bin/mstar up --bind});
     *                    probes reach it there, or on loopback when it is the wildcard
     */
    public record Spec(String name, Path jar, int httpPort, String bindAddress, List<String> args,
                       List<String> jvmOptions, Path logFile, Path workingDir, Duration stopGrace) {

        public Spec {
            args = List.copyOf(args);
            jvmOptions = List.copyOf(jvmOptions);
        }

        String probeHost() {
            return bindAddress.equals("0.0.0.0") || bindAddress.equals("::") ? "127.0.0.1" : bindAddress;
        }
    }

    private final Spec spec;
    private final ManagedProcess process;

    private ServiceProcess(Spec spec, ManagedProcess process) {
        this.spec = spec;
        this.process = process;
    }

    /** Starts the JVM; does not wait for readiness. */
    public static ServiceProcess start(Spec spec) {
        List<String> args = new ArrayList<>();
        args.add("--server.port=" + spec.httpPort());
        // Actuator and API on loopback unless asked otherwise: a developer's stack is not a network service.
        args.add("--server.address=" + spec.bindAddress());
        args.addAll(spec.args());
        List<String> command = JavaCommand.jar(spec.jar(), spec.jvmOptions(), args);
        return new ServiceProcess(spec, ManagedProcess.start(spec.name(), command, spec.workingDir(), spec.logFile()));
    }

    public String name() {
        return spec.name();
    }

    public String baseUrl() {
        return "http://" + spec.probeHost() + ":" + spec.httpPort();
    }

    public String readinessUrl() {
        return baseUrl() + "/actuator/health/readiness";
    }

    public String prometheusUrl() {
        return baseUrl() + "/actuator/prometheus";
    }

    public Spec spec() {
        return spec;
    }

    /** A new process from the same spec (same port, arguments and log file, appended to). */
    public ServiceProcess restart() {
        if (process.isAlive()) {
            throw new StackException(spec.name() + " is still running (pid " + process.pid() + ")");
        }
        return start(spec);
    }

    public ManagedProcess process() {
        return process;
    }

    public boolean isReady() {
        return process.isAlive() && HttpProbe.status(readinessUrl(), Duration.ofSeconds(2)) == 200;
    }

    /** Fails fast, with the log tail, if the process dies before it is ready. */
    public void checkAlive() {
        if (!process.isAlive()) {
            throw new StackException(spec.name() + " " + process.state() + " before becoming ready; "
                    + process.logFile() + " ends with:\n" + process.logTail(40));
        }
    }

    /** Polls readiness until 200 or {@code timeout}. */
    public void awaitReady(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (!isReady()) {
            checkAlive();
            if (Instant.now().isAfter(deadline)) {
                throw notReadyIn(timeout);
            }
            Pause.of(Duration.ofMillis(250));
        }
    }

    StackException notReadyIn(Duration timeout) {
        return new StackException(spec.name() + " was not ready within " + timeout.toSeconds() + " s ("
                + readinessUrl() + " answered " + HttpProbe.status(readinessUrl(), Duration.ofSeconds(2)) + "); "
                + process.logFile() + " ends with:\n" + process.logTail(40));
    }

    /** SIGTERM (the services shut down gracefully on it), SIGKILL after the grace period. */
    @Override
    public void close() {
        process.stop(spec.stopGrace());
    }

    @Override
    public String toString() {
        return spec.name() + " on " + baseUrl() + " (pid " + process.pid() + ")";
    }
}
