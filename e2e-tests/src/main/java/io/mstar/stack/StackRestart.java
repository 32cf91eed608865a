package io.mstar.stack;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * What {@code bin/mstar up} does to a recorded stack of which some processes died (a {@code kill -9}, a crash): it
 * starts exactly those again from their records, that is the same command line (so the same ports, deployment
 * config, topic prefix and admin token file), working directory and log (appended to), and keeps the live ones.
 *
 * <p>Order: a dead broker first, on its data directory as it was (Kafka recovers from the unclean stop), and it
 * must answer before any service is started, as on a fresh start. Then the dead services together. Then every
 * service, restarted or kept, must answer readiness 200, exactly what a fresh {@code up} waits for: a kept
 * conductor is ready again only once it sees a restarted worker, a restarted conductor only once the kept workers
 * reach it, both through Kafka.
 *
 * <p>On a failure (a restarted process exits, readiness times out) what runs is left running and recorded:
 * {@code bin/mstar status} shows it, {@code bin/mstar down} stops it.
 */
final class StackRestart {

    /** The records after the restart, in {@link ProcessRecord#readAll} order, and the names started again. */
    record Outcome(List<ProcessRecord> records, List<String> restarted) {
    }

    /** How long a dead process's port may stay unbindable before the restart gives up on it. */
    private static final Duration PORT_WAIT = Duration.ofSeconds(10);

    private final Path runDir;
    private final Duration readyTimeout;
    private final Consumer<String> progress;
    /** By name, in the order of the records; replaced by the new record on a restart. */
    private final Map<String, ProcessRecord> records = new LinkedHashMap<>();
    /** The processes started here, by name: only these have an exit code and a fresh log tail to report. */
    private final Map<String, ManagedProcess> started = new LinkedHashMap<>();
    /** Dead and not started yet (the services while a dead broker comes back): nothing to check for them. */
    private final java.util.Set<String> notStartedYet = new java.util.HashSet<>();

    private StackRestart(Path runDir, List<ProcessRecord> records, Duration readyTimeout, Consumer<String> progress) {
        this.runDir = runDir;
        this.readyTimeout = readyTimeout;
        this.progress = progress;
        records.forEach(r -> this.records.put(r.name(), r));
    }

    /** Starts the dead ones of {@code records} again and waits until the whole stack is ready. */
    static Outcome restartDead(Path runDir, List<ProcessRecord> records, Duration readyTimeout,
                               Consumer<String> progress) {
        return new StackRestart(runDir, records, readyTimeout, progress).run();
    }

    private Outcome run() {
        List<ProcessRecord> dead = records.values().stream().filter(r -> r.liveHandle().isEmpty()).toList();
        String kept = records.values().stream().filter(r -> !dead.contains(r)).map(ProcessRecord::name)
                .collect(Collectors.joining(", "));
        dead.forEach(r -> notStartedYet.add(r.name()));
        Instant start = Instant.now();
        for (ProcessRecord broker : dead.stream().filter(ProcessRecord::isBroker).toList()) {
            progress.accept("restarting " + broker.name() + " on " + address(broker) + " (kept: " + kept + ")");
            relaunch(broker);
            awaitReady(List.of(broker.name()), start);
        }
        List<ProcessRecord> services = dead.stream().filter(r -> !r.isBroker()).toList();
        if (!services.isEmpty()) {
            progress.accept("restarting " + services.stream().map(ProcessRecord::name).collect(Collectors.joining(", "))
                    + " (kept: " + kept + ")");
            services.forEach(this::relaunch);
        }
        awaitReady(records.values().stream().filter(r -> !r.isBroker()).map(ProcessRecord::name).toList(), start);
        List<ProcessRecord> after = new ArrayList<>(records.values());
        after.sort(java.util.Comparator.comparing(ProcessRecord::isBroker).thenComparing(ProcessRecord::name));
        return new Outcome(after, dead.stream().map(ProcessRecord::name).toList());
    }

    private void relaunch(ProcessRecord record) {
        for (int port : record.ports()) {
            awaitBindable(record, port);
        }
        ManagedProcess process = record.relaunch(runDir);
        started.put(record.name(), process);
        notStartedYet.remove(record.name());
        records.put(record.name(), record.withPid(process.pid()));
    }

    /** A killed listener's port is free at once; one that stays taken belongs to someone else now. */
    private static void awaitBindable(ProcessRecord record, int port) {
        Instant deadline = Instant.now().plus(PORT_WAIT);
        while (!LoopbackPorts.bindable(port)) {
            if (Instant.now().isAfter(deadline)) {
                throw new StackException("cannot start " + record.name() + " again: its port " + port
                        + " on 127.0.0.1 is taken by another process; free it, or run bin/mstar down and up again"
                        + " for new ports");
            }
            Pause.of(Duration.ofMillis(250));
        }
    }

    /** Polls the named processes' readiness until all answer, reporting who is still starting. */
    private void awaitReady(List<String> names, Instant start) {
        Instant deadline = Instant.now().plus(readyTimeout);
        List<String> pending = new ArrayList<>(names);
        while (true) {
            pending.removeIf(name -> records.get(name).isReady());
            if (pending.isEmpty()) {
                progress.accept("ready after " + Duration.between(start, Instant.now()).toSeconds() + " s");
                return;
            }
            // Every process of the stack, not only the pending ones: a broker that dies now fails the services too.
            records.values().forEach(this::checkAlive);
            if (Instant.now().isAfter(deadline)) {
                ProcessRecord first = records.get(pending.get(0));
                throw new StackException(first.name() + " was not ready within " + readyTimeout.toSeconds() + " s ("
                        + probeAnswer(first) + "); " + first.logFile(runDir) + " ends with:\n"
                        + ManagedProcess.tail(first.logFile(runDir), 40));
            }
            progress.accept("waiting for " + String.join(", ", pending) + " ("
                    + Duration.between(start, Instant.now()).toSeconds() + " s)");
            Pause.of(Duration.ofMillis(500));
        }
    }

    private void checkAlive(ProcessRecord record) {
        ManagedProcess process = started.get(record.name());
        if (notStartedYet.contains(record.name())) {
            return;
        }
        if (process != null) {
            if (!process.isAlive()) {
                throw new StackException(record.name() + " " + process.state() + " before becoming ready; "
                        + process.logFile() + " ends with:\n" + process.logTail(40));
            }
        } else if (record.liveHandle().isEmpty()) {
            throw new StackException(record.name() + " (pid " + record.pid() + ", kept running) exited while the stack"
                    + " came back; " + record.logFile(runDir) + " ends with:\n"
                    + ManagedProcess.tail(record.logFile(runDir), 40));
        }
    }

    private static String probeAnswer(ProcessRecord record) {
        if (record.isBroker()) {
            return address(record) + " did not answer";
        }
        return record.probe() + " answered " + HttpProbe.status(record.probe(), Duration.ofSeconds(2));
    }

    private static String address(ProcessRecord record) {
        return record.isBroker() ? record.probe().substring("kafka:".length()) : record.probe();
    }
}
