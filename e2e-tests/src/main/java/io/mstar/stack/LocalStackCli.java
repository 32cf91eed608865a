package io.mstar.stack;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.DeploymentConfigException;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code bin/mstar up|status|down|help}: a local stack that outlives the command that started it.
 * What runs is known only from the records in {@code <state dir>/run}; {@code down} stops
 * exactly those PIDs, and only while they still run the recorded command line.
 *
 * <p>{@code up} on a recorded stack: with every recorded process alive it reports the stack as up and starts
 * nothing; with some of them dead it starts just those again from their records ({@link StackRestart}: same ports,
 * same deployment and options) and keeps the rest; with none alive it discards the records and starts a fresh stack
 * with the options given. The options of the {@code up} that started a stack are kept in {@code run/up.options}.
 *
 * <p>Nothing this prints contains a terminal escape sequence ({@link AnsiFree}); on a terminal the progress line is
 * rewritten in place with carriage returns.
 *
 * <p>Exit codes: 0 success (for {@code status}: everything running and ready), 1 failure (for {@code status}: a
 * recorded process not running or not ready; for {@code up}: a stack whose records are incomplete), 2 usage, 3
 * {@code status} of a stack that is not running.
 */
public final class LocalStackCli {

    /** Set by bin/mstar: whether its standard output is a terminal ({@code [ -t 1 ]}). */
    static final String TERMINAL_PROPERTY = "mstar.cli.terminal";

    private static final String READINESS_PATH = "/actuator/health/readiness";

    private final PrintStream out;
    private final PrintStream err;
    private final boolean terminal;

    LocalStackCli(PrintStream out, PrintStream err, boolean terminal) {
        this.out = out;
        this.err = err;
        this.terminal = terminal;
    }

    public static void main(String[] args) {
        System.exit(new LocalStackCli(AnsiFree.wrap(System.out), AnsiFree.wrap(System.err), stdoutIsTerminal())
                .run(args));
    }

    /** bin/mstar's word for it; else Java's (a console needs standard input to be a terminal too). */
    static boolean stdoutIsTerminal() {
        String told = System.getProperty(TERMINAL_PROPERTY);
        return told != null && !told.isBlank() ? Boolean.parseBoolean(told) : System.console() != null;
    }

    int run(String[] args) {
        CliOptions options;
        try {
            options = CliOptions.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("mstar: " + e.getMessage());
            err.print(CliUsage.TEXT);
            err.flush();
            return 2;
        }
        if (options.command().equals("help")) {
            out.print(CliUsage.TEXT);
            out.flush();
            return 0;
        }
        try {
            options = withDeploymentWorkers(options);
        } catch (IllegalArgumentException | DeploymentConfigException e) {
            err.println("mstar: " + e.getMessage());
            err.flush();
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
                    err.print(CliUsage.TEXT);
                    yield 2;
                }
            };
        } catch (StackException e) {
            err.println("mstar " + options.command() + " failed: " + e.getMessage());
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * With {@code --deployment}, the file checked before anything starts, and as many workers as it places nodes
     * on unless {@code --workers} says more.
     */
    static CliOptions withDeploymentWorkers(CliOptions options) {
        if (options.deployment() == null || !options.command().equals("up")) {
            return options;
        }
        int needed = DeploymentConfig.load(options.deployment()).workerOrdinals().last() + 1;
        if (!options.given().contains("--workers")) {
            return options.withWorkers(needed);
        }
        if (options.workers() < needed) {
            throw new IllegalArgumentException(options.deployment() + " places nodes on worker " + (needed - 1)
                    + ": start " + needed + " workers or more, not --workers " + options.workers());
        }
        return options;
    }

    private int up(ProjectLayout layout, Path stateDir, CliOptions options) {
        Path runDir = stateDir.resolve("run");
        List<ProcessRecord> records = ProcessRecord.readAll(runDir);
        List<ProcessRecord> live = records.stream().filter(r -> r.liveHandle().isPresent()).toList();
        if (!live.isEmpty()) {
            return upAgain(stateDir, options, records, live.size());
        }
        if (!records.isEmpty()) {
            out.println("M* local stack: none of its " + records.size()
                    + " recorded processes runs any more; starting a fresh one");
        }
        records.forEach(r -> r.delete(runDir));
        CliOptions.forget(runDir);

        ProgressLine progress = new ProgressLine(out, terminal);
        LocalStack.Builder builder = LocalStack.builder()
                .layout(layout)
                .stateDir(stateDir)
                .workers(options.workers())
                .topicPrefix(options.topicPrefix())
                .bindAddress(options.bindAddress())
                .readyTimeout(Duration.ofSeconds(options.timeoutSeconds()))
                .progress(progress::update);
        if (options.deployment() != null) {
            builder.deploymentFile(options.deployment());
        }
        if (options.basePort() > 0) {
            int base = options.basePort();
            builder.kafkaPorts(base, base + 1).conductorPort(base + 2).workerBasePort(base + 3);
        } else {
            builder.conductorPort(options.conductorPort());
        }
        // Before the first process, so that a later up knows how many workers the stack should have even if this
        // one is killed half-way.
        options.record(runDir);
        LocalStack stack;
        try {
            // Ctrl-C here runs LocalStack's shutdown hook, which stops what was started so far.
            stack = builder.start();
        } catch (RuntimeException e) {
            progress.finish();
            CliOptions.forget(runDir);
            throw e;
        }
        stack.detach();
        progress.finish();

        List<String[]> workers = stack.workers().stream()
                .map(w -> new String[] {w.name(), w.baseUrl()}).toList();
        printUp("", stack.conductor().baseUrl(), workers, stack.bootstrapServers(), stack.topicPrefix(), stateDir);
        return 0;
    }

    /** {@code up} on a stack of which {@code liveCount} recorded processes still run. */
    private int upAgain(Path stateDir, CliOptions options, List<ProcessRecord> records, int liveCount) {
        Path runDir = stateDir.resolve("run");
        Optional<CliOptions> recorded = CliOptions.recorded(runDir);
        List<String> conflicts = recorded.map(options::conflictsWith).orElse(List.of());
        if (!conflicts.isEmpty()) {
            err.println("mstar: ignoring " + String.join(", ", conflicts) + ": a stack is recorded in " + runDir
                    + " and keeps its options; run bin/mstar down first to change them");
        }
        List<String> missing = recorded.map(r -> missingRecords(r, records)).orElse(List.of());
        if (!missing.isEmpty()) {
            err.println("M* local stack is incomplete: no record of " + String.join(", ", missing) + " in " + runDir
                    + " (an up still starting it, or one that was killed); wait for that up, or run bin/mstar down first");
            return 1;
        }
        if (liveCount == records.size()) {
            out.println("M* local stack is already up (all " + records.size() + " recorded processes are running):");
            printStatus(records);
            return 0;
        }
        Duration timeout = Duration.ofSeconds(options.given().contains("--timeout") || recorded.isEmpty()
                ? options.timeoutSeconds() : recorded.get().timeoutSeconds());
        ProgressLine progress = new ProgressLine(out, terminal);
        StackRestart.Outcome outcome;
        try {
            outcome = StackRestart.restartDead(runDir, records, timeout, progress::update);
        } finally {
            progress.finish();
        }
        List<ProcessRecord> now = outcome.records();
        ProcessRecord conductor = now.stream().filter(r -> r.name().equals("conductor")).findFirst()
                .orElseThrow(() -> new StackException("no conductor is recorded in " + runDir + "; run bin/mstar down first"));
        ProcessRecord broker = now.stream().filter(ProcessRecord::isBroker).findFirst()
                .orElseThrow(() -> new StackException("no broker is recorded in " + runDir + "; run bin/mstar down first"));
        List<String[]> workers = now.stream().filter(r -> r.name().startsWith("worker-"))
                .map(r -> new String[] {r.name(), serviceUrl(r)}).toList();
        String topicPrefix = recorded.map(CliOptions::topicPrefix).orElseGet(() -> topicPrefixOf(conductor));
        List<String> kept = now.stream().map(ProcessRecord::name).filter(n -> !outcome.restarted().contains(n)).toList();
        printUp("; restarted " + String.join(", ", outcome.restarted()) + ", kept " + String.join(", ", kept),
                serviceUrl(conductor), workers, broker.probe().substring("kafka:".length()), topicPrefix, stateDir);
        return 0;
    }

    /** The process names a stack of {@code recorded}'s shape has and {@code records} lacks. */
    private static List<String> missingRecords(CliOptions recorded, List<ProcessRecord> records) {
        List<String> expected = new ArrayList<>(List.of("conductor"));
        for (int n = 0; n < recorded.workers(); n++) {
            expected.add("worker-" + n);
        }
        expected.add("kafka");
        List<String> names = records.stream().map(ProcessRecord::name).toList();
        return expected.stream().filter(name -> !names.contains(name)).toList();
    }

    private void printUp(String restartNote, String conductorUrl, List<String[]> workers, String bootstrapServers,
                         String topicPrefix, Path stateDir) {
        out.println("M* local stack is up (" + workers.size() + " workers, topic prefix " + topicPrefix
                + restartNote + "):");
        out.printf("  %-10s %s   (API; actuator under /actuator)%n", "conductor", conductorUrl);
        for (String[] worker : workers) {
            out.printf("  %-10s %s/actuator%n", worker[0], worker[1]);
        }
        out.printf("  %-10s %s   (bootstrap servers)%n", "kafka", bootstrapServers);
        out.printf("  %-10s %s%n", "logs", stateDir.resolve("logs"));
        out.printf("  %-10s %s   (bearer token of /admin/*)%n", "admin", stateDir.resolve(SecretFile.ADMIN_TOKEN));
        out.println("Stop it with: bin/mstar down");
    }

    private static String serviceUrl(ProcessRecord record) {
        return record.probe().replace(READINESS_PATH, "");
    }

    /** From the conductor's command line, for a stack whose options were not recorded. */
    private static String topicPrefixOf(ProcessRecord conductor) {
        String flag = "--mstar.messaging.topic-prefix=";
        return conductor.command().stream().filter(a -> a.startsWith(flag)).map(a -> a.substring(flag.length()))
                .findFirst().orElse("?");
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
        String base = serviceUrl(record);
        return record.name().equals("conductor") ? base + " (API)" : base + "/actuator";
    }

    private static String yesNo(boolean value) {
        return value ? "yes" : "no";
    }

    private int down(Path stateDir) {
        Path runDir = stateDir.resolve("run");
        List<ProcessRecord> records = ProcessRecord.readAll(runDir);
        if (records.isEmpty()) {
            CliOptions.forget(runDir);
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
        CliOptions.forget(runDir);
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
