package io.mstar.stack;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bin/mstar up|status|down}: a local stack that outlives the command that started it.
 * What runs is known only from the records in {@code <state dir>/run}; {@code down} stops
 * exactly those PIDs, and only while they still run the recorded command line.
 *
 * <p>Exit codes: 0 success (for {@code status}: everything running and ready), 1 failure or a
 * partly running stack, 2 usage, 3 {@code status} of a stack that is not running.
 */
public final class LocalStackCli {

    private static final String USAGE = """
            usage: bin/mstar up [--workers N] [--conductor-port P] [--base-port P] [--topic-prefix X] [--timeout SECONDS]
                   bin/mstar status
                   bin/mstar down
            options for every command: --state-dir DIR (default <repo>/.mstar)
              --workers N      worker processes (default 2)
              --conductor-port P  the conductor's HTTP port (default 8080; 0 = any free port)
              --base-port P    fixed ports for everything: Kafka P, its controller P+1, conductor P+2,
                               worker n P+3+n (default: the conductor on --conductor-port, the rest on
                               free ports, printed by up and status)
            """;

    private final PrintStream out;
    private final PrintStream err;

    LocalStackCli(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(new LocalStackCli(System.out, System.err).run(args));
    }

    int run(String[] args) {
        CliOptions options;
        try {
            options = CliOptions.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("mstar: " + e.getMessage());
            err.print(USAGE);
            return 2;
        }
        try {
            ProjectLayout layout = ProjectLayout.discover();
            Path stateDir = options.stateDir() != null ? options.stateDir() : layout.defaultStateDir();
            return switch (options.command()) {
                case "up" -> up(layout, stateDir, options);
                case "status" -> status(stateDir);
                case "down" -> down(stateDir);
                default -> {
                    err.print(USAGE);
                    yield 2;
                }
            };
        } catch (StackException e) {
            err.println("mstar " + options.command() + " failed: " + e.getMessage());
            return 1;
        }
    }

    private int up(ProjectLayout layout, Path stateDir, CliOptions options) {
        Path runDir = stateDir.resolve("run");
        List<ProcessRecord> records = ProcessRecord.readAll(runDir);
        List<ProcessRecord> live = records.stream().filter(r -> r.liveHandle().isPresent()).toList();
        if (!live.isEmpty()) {
            if (live.size() == records.size()) {
                out.println("M* local stack is already running (" + live.size() + " processes):");
                printStatus(records);
                return 0;
            }
            err.println("M* local stack is partly running (" + live.size() + " of " + records.size()
                    + " recorded processes); run bin/mstar down first");
            return 1;
        }
        records.forEach(r -> r.delete(runDir));

        ProgressLine progress = new ProgressLine(out, System.console() != null);
        LocalStack.Builder builder = LocalStack.builder()
                .layout(layout)
                .stateDir(stateDir)
                .workers(options.workers())
                .topicPrefix(options.topicPrefix())
                .readyTimeout(Duration.ofSeconds(options.timeoutSeconds()))
                .progress(progress::update);
        if (options.basePort() > 0) {
            int base = options.basePort();
            builder.kafkaPorts(base, base + 1).conductorPort(base + 2).workerBasePort(base + 3);
        } else {
            builder.conductorPort(options.conductorPort());
        }
        // Ctrl-C here runs LocalStack's shutdown hook, which stops what was started so far.
        LocalStack stack = builder.start();
        stack.detach();
        progress.finish();

        out.println("M* local stack is up (" + stack.workers().size() + " workers, topic prefix "
                + stack.topicPrefix() + "):");
        out.printf("  %-10s %s   (API; actuator under /actuator)%n", "conductor", stack.conductor().baseUrl());
        for (ServiceProcess worker : stack.workers()) {
            out.printf("  %-10s %s/actuator%n", worker.name(), worker.baseUrl());
        }
        out.printf("  %-10s %s   (bootstrap servers)%n", "kafka", stack.bootstrapServers());
        out.printf("  %-10s %s%n", "logs", stateDir.resolve("logs"));
        out.printf("  %-10s %s   (bearer token of /admin/*)%n", "admin", stack.adminToken().file());
        out.println("Stop it with: bin/mstar down");
        return 0;
    }

    private int status(Path stateDir) {
        List<ProcessRecord> records = ProcessRecord.readAll(stateDir.resolve("run"));
        if (records.isEmpty()) {
            out.println("M* local stack is not running (no records in " + stateDir.resolve("run") + ")");
            return 3;
        }
        return printStatus(records) ? 0 : 1;
    }

    /** One line per recorded process; true when all of them run and are ready. */
    private boolean printStatus(List<ProcessRecord> records) {
        boolean allReady = true;
        out.printf("  %-10s %-8s %-6s %-6s %s%n", "process", "pid", "alive", "ready", "address");
        for (ProcessRecord record : records) {
            boolean alive = record.liveHandle().isPresent();
            boolean ready = alive && record.isReady();
            allReady &= ready;
            out.printf("  %-10s %-8d %-6s %-6s %s%n", record.name(), record.pid(), yesNo(alive), yesNo(ready),
                    address(record));
        }
        return allReady;
    }

    private static String address(ProcessRecord record) {
        if (record.isBroker()) {
            return record.probe().substring("kafka:".length()) + " (bootstrap servers)";
        }
        String base = record.probe().replace("/actuator/health/readiness", "");
        return record.name().equals("conductor") ? base + " (API)" : base + "/actuator";
    }

    private static String yesNo(boolean value) {
        return value ? "yes" : "no";
    }

    private int down(Path stateDir) {
        Path runDir = stateDir.resolve("run");
        List<ProcessRecord> records = ProcessRecord.readAll(runDir);
        if (records.isEmpty()) {
            out.println("M* local stack is not running");
            return 0;
        }
        List<ProcessRecord> services = records.stream().filter(r -> !r.isBroker()).toList();
        List<ProcessRecord> brokers = records.stream().filter(ProcessRecord::isBroker).toList();
        // Services first and together, then the broker they would otherwise keep retrying.
        List<String> failures = new ArrayList<>(stopAll(services, runDir));
        failures.addAll(stopAll(brokers, runDir));
        try {
            KafkaBroker.deleteRecursively(stateDir.resolve("kafka-data"));
        } catch (IOException e) {
            failures.add("cannot delete " + stateDir.resolve("kafka-data") + ": " + e.getMessage());
        }
        if (!failures.isEmpty()) {
            failures.forEach(f -> err.println("mstar down: " + f));
            return 1;
        }
        out.println("M* local stack is down");
        return 0;
    }

    private List<String> stopAll(List<ProcessRecord> records, Path runDir) {
        return ParallelStop.stopEach(records, "mstar-down-", ProcessRecord::name, record -> {
            if (record.stop(Duration.ofSeconds(30))) {
                out.println("stopped " + record.name() + " (pid " + record.pid() + ")");
            } else {
                out.println(record.name() + " (pid " + record.pid() + ") was no longer running");
            }
            record.delete(runDir);
        }).stream().map(StackException::getMessage).toList();
    }
}
